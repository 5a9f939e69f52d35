// RUN: tessera-opt %s -split-input-file -verify-diagnostics

func.func @map_without_outputs(%a: memref<4xf32>) {
  // expected-error @+1 {{expected at least one output}}
  "tile.map"(%a) <{operandSegmentSizes = array<i32: 1, 0>}> ({
  ^bb0(%x: f32):
    tile.yield
  }) : (memref<4xf32>) -> ()
  return
}

// -----

func.func @map_rank_mismatch(%a: memref<4x4xf32>, %c: memref<16xf32>) {
  // expected-error @+1 {{expected input #0 ('memref<4x4xf32>') to have rank 1 like output #0 ('memref<16xf32>')}}
  tile.map ins(%a : memref<4x4xf32>) outs(%c : memref<16xf32>) {
  ^bb0(%x: f32):
    tile.yield %x : f32
  }
  return
}

// -----

func.func @map_static_dim_mismatch(%a: memref<4x8xf32>, %c: memref<4x9xf32>) {
  // expected-error @+1 {{expected dimension 1 of input #0 ('memref<4x8xf32>') to be 9 like output #0 ('memref<4x9xf32>')}}
  tile.map ins(%a : memref<4x8xf32>) outs(%c : memref<4x9xf32>) {
  ^bb0(%x: f32):
    tile.yield %x : f32
  }
  return
}

// -----

func.func @map_output_shape_mismatch(%c: memref<4xf32>, %d: memref<5xf32>) {
  // expected-error @+1 {{expected dimension 0 of output #1 ('memref<5xf32>') to be 4 like output #0 ('memref<4xf32>')}}
  tile.map outs(%c, %d : memref<4xf32>, memref<5xf32>) {
    %z = arith.constant 0.0 : f32
    tile.yield %z, %z : f32, f32
  }
  return
}

// -----

func.func @map_argument_count(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>) {
  // expected-error @+1 {{expected the body to take 2 argument(s), one per input, found 1}}
  tile.map ins(%a, %b : memref<4xf32>, memref<4xf32>) outs(%c : memref<4xf32>) {
  ^bb0(%x: f32):
    tile.yield %x : f32
  }
  return
}

// -----

func.func @map_argument_type(%a: memref<4xf16>, %c: memref<4xf32>) {
  // expected-error @+1 {{expected body argument #0 to have type 'f16' (the element type of input #0), found 'f32'}}
  tile.map ins(%a : memref<4xf16>) outs(%c : memref<4xf32>) {
  ^bb0(%x: f32):
    tile.yield %x : f32
  }
  return
}

// -----

func.func @map_yield_count(%a: memref<4xf32>, %c: memref<4xf32>) {
  tile.map ins(%a : memref<4xf32>) outs(%c : memref<4xf32>) {
  ^bb0(%x: f32):
    // expected-error @+1 {{expected 1 value(s), one per output of the enclosing 'tile.map', found 2}}
    tile.yield %x, %x : f32, f32
  }
  return
}

// -----

func.func @map_yield_type(%a: memref<4xf32>, %c: memref<4xf16>) {
  tile.map ins(%a : memref<4xf32>) outs(%c : memref<4xf16>) {
  ^bb0(%x: f32):
    // expected-error @+1 {{expected value #0 to have type 'f16' (the element type of output #0), found 'f32'}}
    tile.yield %x : f32
  }
  return
}

// -----

func.func @map_body_op_not_allowed(%a: memref<4xf32>, %c: memref<4xf32>, %m: memref<4xf32>) {
  tile.map ins(%a : memref<4xf32>) outs(%c : memref<4xf32>) {
  ^bb0(%x: f32):
    %i = arith.constant 0 : index
    // expected-error @+1 {{'memref.load' op is not allowed in a 'tile.map' body; expected pure operations of the arith or math dialect}}
    %v = memref.load %m[%i] : memref<4xf32>
    tile.yield %v : f32
  }
  return
}

// -----

func.func @map_missing_yield(%a: memref<4xf32>, %c: memref<4xf32>) {
  tile.map ins(%a : memref<4xf32>) outs(%c : memref<4xf32>) {
  ^bb0(%x: f32):
    // expected-error @+1 {{block with no terminator}}
    %y = arith.negf %x : f32
  }
  return
}

// -----

func.func @map_unranked_output(%a: memref<*xf32>) {
  // expected-error @+1 {{operand #0 must be variadic of}}
  "tile.map"(%a) <{operandSegmentSizes = array<i32: 0, 1>}> ({
    %z = arith.constant 0.0 : f32
    tile.yield %z : f32
  }) : (memref<*xf32>) -> ()
  return
}

// -----

func.func @yield_outside_map() {
  // expected-error @+1 {{'tile.yield' op expects parent op 'tile.map'}}
  tile.yield
}

// -----

func.func @reduce_unknown_kind(%x: memref<4x8xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [sum, mean, max, min, prod]}}
  tile.reduce median %x -> %y axis = 1 : memref<4x8xf32> -> memref<4xf32>
  return
}

// -----

func.func @reduce_axis_out_of_range(%x: memref<4x8xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{expected axis in [0, 2) for an input of rank 2, found 2}}
  tile.reduce sum %x -> %y axis = 2 : memref<4x8xf32> -> memref<4xf32>
  return
}

// -----

func.func @reduce_negative_axis(%x: memref<4x8xf32>, %y: memref<8xf32>) {
  // expected-error @+1 {{expected axis in [0, 2) for an input of rank 2, found -1}}
  tile.reduce sum %x -> %y axis = -1 : memref<4x8xf32> -> memref<8xf32>
  return
}

// -----

func.func @reduce_output_rank(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{expected output rank 1 (input rank 2 without axis 1), found 2}}
  tile.reduce max %x -> %y axis = 1 : memref<4x8xf32> -> memref<4x8xf32>
  return
}

// -----

func.func @reduce_keepdims_rank(%x: memref<4x8xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{expected output rank 2 (input rank 2 with keepdims), found 1}}
  tile.reduce max %x -> %y axis = 1 keepdims : memref<4x8xf32> -> memref<4xf32>
  return
}

// -----

func.func @reduce_output_dim(%x: memref<4x8xf32>, %y: memref<8xf32>) {
  // expected-error @+1 {{expected output dimension 0 to be 4 (input dimension 0), found 8}}
  tile.reduce min %x -> %y axis = 1 : memref<4x8xf32> -> memref<8xf32>
  return
}

// -----

func.func @reduce_keepdims_axis_not_one(%x: memref<4x8xf32>, %y: memref<4x2xf32>) {
  // expected-error @+1 {{expected output dimension 1 to be 1 (the reduced axis with keepdims), found 2}}
  tile.reduce prod %x -> %y axis = 1 keepdims : memref<4x8xf32> -> memref<4x2xf32>
  return
}

// -----

func.func @reduce_integer_input(%x: memref<4x8xi32>, %y: memref<4xi32>) {
  // expected-error @+1 {{operand #0 must be non-0-ranked.memref of 32-bit float or 16-bit float or bfloat16 type values}}
  tile.reduce sum %x -> %y axis = 1 : memref<4x8xi32> -> memref<4xi32>
  return
}

// -----

func.func @matmul_k_mismatch(%a: memref<16x64xf32>, %b: memref<32x8xf32>, %c: memref<16x8xf32>) {
  // expected-error @+1 {{expected K of A (64) to equal K of B (32)}}
  tile.matmul %a, %b -> %c : memref<16x64xf32>, memref<32x8xf32> -> memref<16x8xf32>
  return
}

// -----

func.func @matmul_k_mismatch_transposed(%a: memref<64x16xf32>, %b: memref<8x32xf32>, %c: memref<16x8xf32>) {
  // expected-error @+1 {{expected K of A (64) to equal K of B (32)}}
  tile.matmul %a, %b -> %c {transpose_a, transpose_b} : memref<64x16xf32>, memref<8x32xf32> -> memref<16x8xf32>
  return
}

// -----

func.func @matmul_m_mismatch(%a: memref<16x32xf32>, %b: memref<32x8xf32>, %c: memref<15x8xf32>) {
  // expected-error @+1 {{expected M of C (15) to equal M of A (16)}}
  tile.matmul %a, %b -> %c : memref<16x32xf32>, memref<32x8xf32> -> memref<15x8xf32>
  return
}

// -----

func.func @matmul_n_mismatch(%a: memref<16x32xf32>, %b: memref<32x8xf32>, %c: memref<16x9xf32>) {
  // expected-error @+1 {{expected N of C (9) to equal N of B (8)}}
  tile.matmul %a, %b -> %c : memref<16x32xf32>, memref<32x8xf32> -> memref<16x9xf32>
  return
}

// -----

func.func @matmul_rank(%a: memref<2x16x32xf32>, %b: memref<32x8xf32>, %c: memref<16x8xf32>) {
  // expected-error @+1 {{operand #0 must be 2D memref of 32-bit float or 16-bit float or bfloat16 type values}}
  tile.matmul %a, %b -> %c : memref<2x16x32xf32>, memref<32x8xf32> -> memref<16x8xf32>
  return
}

// -----

func.func @matmul_element_type_mismatch(%a: memref<16x32xf16>, %b: memref<32x8xf32>, %c: memref<16x8xf32>) {
  // expected-error @+1 {{expected A and B to have the same element type, found 'f16' and 'f32'}}
  tile.matmul %a, %b -> %c : memref<16x32xf16>, memref<32x8xf32> -> memref<16x8xf32>
  return
}

// -----

func.func @matmul_bias_length(%a: memref<16x32xf32>, %b: memref<32x8xf32>, %bias: memref<16xf32>, %c: memref<16x8xf32>) {
  // expected-error @+1 {{expected the bias length (16) to equal N (8)}}
  tile.matmul %a, %b -> %c bias(%bias : memref<16xf32>) : memref<16x32xf32>, memref<32x8xf32> -> memref<16x8xf32>
  return
}

// -----

func.func @matmul_bias_element_type(%a: memref<16x32xf32>, %b: memref<32x8xf32>, %bias: memref<8xf16>, %c: memref<16x8xf32>) {
  // expected-error @+1 {{expected the bias element type ('f16') to equal the element type of C ('f32')}}
  tile.matmul %a, %b -> %c bias(%bias : memref<8xf16>) : memref<16x32xf32>, memref<32x8xf32> -> memref<16x8xf32>
  return
}

// -----

func.func @matmul_unknown_activation(%a: memref<16x32xf32>, %b: memref<32x8xf32>, %c: memref<16x8xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'activation' [none, relu, gelu, silu]}}
  tile.matmul %a, %b -> %c activation(tanh) : memref<16x32xf32>, memref<32x8xf32> -> memref<16x8xf32>
  return
}

// -----

func.func @matmul_tf32_on_f16(%a: memref<16x32xf16>, %b: memref<32x8xf16>, %c: memref<16x8xf32>) {
  // expected-error @+1 {{numeric policy 'tf32' requires f32 inputs, found 'f16'}}
  tile.matmul %a, %b -> %c policy(tf32) : memref<16x32xf16>, memref<32x8xf16> -> memref<16x8xf32>
  return
}

// -----

func.func @matmul_f16_accumulate_on_f32(%a: memref<16x32xf32>, %b: memref<32x8xf32>, %c: memref<16x8xf32>) {
  // expected-error @+1 {{numeric policy 'f16' requires f16 inputs, found 'f32'}}
  tile.matmul %a, %b -> %c policy(f16) : memref<16x32xf32>, memref<32x8xf32> -> memref<16x8xf32>
  return
}

// -----

func.func @softmax_shape_mismatch(%x: memref<4x10xf32>, %y: memref<4x11xf32>) {
  // expected-error @+1 {{expected dimension 1 of the output ('memref<4x11xf32>') to be 10 like the input ('memref<4x10xf32>')}}
  tile.softmax %x -> %y : memref<4x10xf32> -> memref<4x11xf32>
  return
}

// -----

func.func @softmax_rank_mismatch(%x: memref<4x10xf32>, %y: memref<40xf32>) {
  // expected-error @+1 {{expected the output ('memref<40xf32>') to have rank 2 like the input ('memref<4x10xf32>')}}
  tile.softmax %x -> %y : memref<4x10xf32> -> memref<40xf32>
  return
}

// -----

func.func @softmax_element_type_mismatch(%x: memref<4x10xf32>, %y: memref<4x10xf16>) {
  // expected-error @+1 {{expected the output element type ('f16') to equal the input element type ('f32')}}
  tile.softmax %x -> %y : memref<4x10xf32> -> memref<4x10xf16>
  return
}
