// Elementwise programs: saxpy with a broadcast scalar, tanh-approximated GELU in f16, and a
// masked select that also writes the mask.
func.func @saxpy(%alpha: f32, %x: memref<?xf32>, %y: memref<?xf32>, %out: memref<?xf32>) {
  tile.map ins(%alpha, %x, %y : f32, memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%a: f32, %xi: f32, %yi: f32):
    %ax = arith.mulf %a, %xi : f32
    %r = arith.addf %ax, %yi : f32
    tile.yield %r : f32
  }
  return
}

// gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), computed in f32 for f16 storage.
func.func @gelu_f16(%x: memref<?x?xf16>, %y: memref<?x?xf16>) {
  tile.map ins(%x : memref<?x?xf16>) outs(%y : memref<?x?xf16>) {
  ^bb0(%h: f16):
    %v = arith.extf %h : f16 to f32
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %c = arith.constant 0.7978845608 : f32
    %k = arith.constant 0.044715 : f32
    %v2 = arith.mulf %v, %v : f32
    %v3 = arith.mulf %v2, %v : f32
    %kv3 = arith.mulf %k, %v3 : f32
    %inner = arith.addf %v, %kv3 : f32
    %scaled = arith.mulf %c, %inner : f32
    %t = math.tanh %scaled : f32
    %onept = arith.addf %one, %t : f32
    %hv = arith.mulf %half, %v : f32
    %r = arith.mulf %hv, %onept : f32
    %rh = arith.truncf %r : f32 to f16
    tile.yield %rh : f16
  }
  return
}

func.func @clip_and_mask(%x: memref<128x128xf32>, %limit: f32, %clipped: memref<128x128xf32>,
                         %mask: memref<128x128xi1>) {
  tile.map ins(%x, %limit : memref<128x128xf32>, f32)
      outs(%clipped, %mask : memref<128x128xf32>, memref<128x128xi1>) {
  ^bb0(%v: f32, %l: f32):
    %over = arith.cmpf ogt, %v, %l : f32
    %r = arith.select %over, %l, %v : f32
    tile.yield %r, %over : f32, i1
  }
  return
}
