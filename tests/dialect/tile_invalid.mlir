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
  // expected-error @+1 {{expected input #0 ('memref<4x4xf32>') to have rank at most 1 like output #0 ('memref<16xf32>'); it broadcasts to that shape}}
  tile.map ins(%a : memref<4x4xf32>) outs(%c : memref<16xf32>) {
  ^bb0(%x: f32):
    tile.yield %x : f32
  }
  return
}

// -----

func.func @map_static_dim_mismatch(%a: memref<4x8xf32>, %c: memref<4x9xf32>) {
  // expected-error @+1 {{expected dimension 1 of input #0 ('memref<4x8xf32>') to be 1 or 9, to broadcast to dimension 1 of output #0 ('memref<4x9xf32>')}}
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
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [sum, mean, max, min, prod, argmax, argmin]}}
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
  // expected-error @+1 {{expected C to have rank 3 (the larger of A's and B's), found 2}}
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

func.func @matmul_bias_element_type(%a: memref<16x32xf32>, %b: memref<32x8xf32>, %bias: memref<8xf16>, %c: memref<16x8xbf16>) {
  // expected-error @+1 {{expected the bias element type ('f16') to be f32 or the element type of C ('bf16')}}
  tile.matmul %a, %b -> %c bias(%bias : memref<8xf16>) : memref<16x32xf32>, memref<32x8xf32> -> memref<16x8xbf16>
  return
}

// -----

func.func @matmul_residual_rank(%a: memref<16x32xf32>, %b: memref<32x8xf32>, %r: memref<8xf32>, %c: memref<16x8xf32>) {
  // expected-error @+1 {{expected the residual ('memref<8xf32>') to have rank 2 like C ('memref<16x8xf32>')}}
  tile.matmul %a, %b -> %c residual(%r : memref<8xf32>) : memref<16x32xf32>, memref<32x8xf32> -> memref<16x8xf32>
  return
}

// -----

func.func @matmul_residual_shape(%a: memref<16x32xf32>, %b: memref<32x8xf32>, %r: memref<16x9xf32>, %c: memref<16x8xf32>) {
  // expected-error @+1 {{expected dimension 1 of the residual ('memref<16x9xf32>') to be 8 like C ('memref<16x8xf32>')}}
  tile.matmul %a, %b -> %c residual(%r : memref<16x9xf32>) : memref<16x32xf32>, memref<32x8xf32> -> memref<16x8xf32>
  return
}

// -----

func.func @matmul_residual_element_type(%a: memref<16x32xf16>, %b: memref<32x8xf16>, %r: memref<16x8xbf16>, %c: memref<16x8xf16>) {
  // expected-error @+1 {{expected the residual element type ('bf16') to be f32 or the element type of C ('f16')}}
  tile.matmul %a, %b -> %c residual(%r : memref<16x8xbf16>) : memref<16x32xf16>, memref<32x8xf16> -> memref<16x8xf16>
  return
}

// -----

func.func @matmul_unknown_activation(%a: memref<16x32xf32>, %b: memref<32x8xf32>, %c: memref<16x8xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'activation' [none, relu, gelu, silu, gelu_tanh]}}
  tile.matmul %a, %b -> %c activation(tanh) : memref<16x32xf32>, memref<32x8xf32> -> memref<16x8xf32>
  return
}

// -----

func.func @matmul_i8_into_f32(%a: memref<16x32xi8>, %b: memref<32x8xi8>, %c: memref<16x8xf32>) {
  // expected-error @+1 {{expected C to have element type i32 exactly when A and B are i8 (i32 accumulation), found 'i8' operands and a 'f32' C}}
  tile.matmul %a, %b -> %c : memref<16x32xi8>, memref<32x8xi8> -> memref<16x8xf32>
  return
}

// -----

func.func @matmul_f32_into_i32(%a: memref<16x32xf32>, %b: memref<32x8xf32>, %c: memref<16x8xi32>) {
  // expected-error @+1 {{expected C to have element type i32 exactly when A and B are i8 (i32 accumulation), found 'f32' operands and a 'i32' C}}
  tile.matmul %a, %b -> %c : memref<16x32xf32>, memref<32x8xf32> -> memref<16x8xi32>
  return
}

// -----

func.func @matmul_f64_into_f32(%a: memref<16x32xf64>, %b: memref<32x8xf64>, %c: memref<16x8xf32>) {
  // expected-error @+1 {{expected C to have element type f64 exactly when A and B are f64 (f64 accumulation), found 'f64' operands and a 'f32' C}}
  tile.matmul %a, %b -> %c : memref<16x32xf64>, memref<32x8xf64> -> memref<16x8xf32>
  return
}

// -----

func.func @matmul_fp8_into_f64(%a: memref<16x32xf8E4M3FN>, %b: memref<32x8xf8E4M3FN>, %c: memref<16x8xf64>) {
  // expected-error @+1 {{expected C to have element type f64 exactly when A and B are f64 (f64 accumulation), found 'f8E4M3FN' operands and a 'f64' C}}
  tile.matmul %a, %b -> %c : memref<16x32xf8E4M3FN>, memref<32x8xf8E4M3FN> -> memref<16x8xf64>
  return
}

// -----

func.func @matmul_fp8_mixed(%a: memref<16x32xf8E4M3FN>, %b: memref<32x8xf8E5M2>, %c: memref<16x8xf32>) {
  // expected-error @+1 {{expected A and B to have the same element type, found 'f8E4M3FN' and 'f8E5M2'}}
  tile.matmul %a, %b -> %c : memref<16x32xf8E4M3FN>, memref<32x8xf8E5M2> -> memref<16x8xf32>
  return
}

// -----

func.func @matmul_i8_relu(%a: memref<16x32xi8>, %b: memref<32x8xi8>, %c: memref<16x8xi32>) {
  // expected-error @+1 {{an i8 matmul writes its i32 sums as they are: it takes no bias, residual or activation}}
  tile.matmul %a, %b -> %c activation(relu) : memref<16x32xi8>, memref<32x8xi8> -> memref<16x8xi32>
  return
}

// -----

func.func @matmul_fp8_policy(%a: memref<16x32xf8E5M2>, %b: memref<32x8xf8E5M2>, %c: memref<16x8xf32>) {
  // expected-error @+1 {{a numeric policy applies to f16, bf16 and f32 operands; 'f8E5M2' operands accumulate in f32 (drop `policy(...)`)}}
  tile.matmul %a, %b -> %c policy(f32) : memref<16x32xf8E5M2>, memref<32x8xf8E5M2> -> memref<16x8xf32>
  return
}

// -----

func.func @matmul_in_place(%a: memref<16x16xf32>, %b: memref<16x16xf32>) {
  // expected-error @+1 {{expected C to be a buffer of its own: it is A too (a matmul is not computed in place)}}
  tile.matmul %a, %b -> %a : memref<16x16xf32>, memref<16x16xf32> -> memref<16x16xf32>
  return
}

// -----

func.func @matmul_f64_fma(%a: memref<16x32xf64>, %b: memref<32x8xf64>, %c: memref<16x8xf64>) {
  // expected-error @+1 {{a numeric policy applies to f16, bf16 and f32 operands; 'f64' operands accumulate in f64 (drop `policy(...)`)}}
  tile.matmul %a, %b -> %c policy(fma) : memref<16x32xf64>, memref<32x8xf64> -> memref<16x8xf64>
  return
}

// -----

func.func @matmul_i16(%a: memref<16x32xi16>, %b: memref<32x8xi16>, %c: memref<16x8xi32>) {
  // expected-error @+1 {{operand #0 must be non-0-ranked.memref of 32-bit float or 16-bit float or bfloat16 type or 64-bit float or f8E4M3FN type or f8E5M2 type or 8-bit signless integer values}}
  tile.matmul %a, %b -> %c : memref<16x32xi16>, memref<32x8xi16> -> memref<16x8xi32>
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

// -----

func.func @matmul_vector(%a: memref<32xf32>, %b: memref<32x8xf32>, %c: memref<1x8xf32>) {
  // expected-error @+1 {{expected A ('memref<32xf32>') to have rank 2 or more: [batch..., rows, columns]}}
  tile.matmul %a, %b -> %c : memref<32xf32>, memref<32x8xf32> -> memref<1x8xf32>
  return
}

// -----

func.func @matmul_batch_mismatch(%a: memref<3x16x32xf32>, %b: memref<2x32x8xf32>, %c: memref<3x16x8xf32>) {
  // expected-error @+1 {{expected dimension 0 of the batch of B ('memref<2x32x8xf32>') to be 1 or 3, to broadcast to dimension 0 of the batch of C ('memref<3x16x8xf32>')}}
  tile.matmul %a, %b -> %c : memref<3x16x32xf32>, memref<2x32x8xf32> -> memref<3x16x8xf32>
  return
}

// -----

func.func @argmax_float_output(%x: memref<4x8xf32>, %i: memref<4xf32>) {
  // expected-error @+1 {{expected an i32 or i64 output for 'argmax' (it writes indices), found 'f32'}}
  tile.reduce argmax %x -> %i axis = 1 : memref<4x8xf32> -> memref<4xf32>
  return
}

// -----

func.func @sum_index_output(%x: memref<4x8xf32>, %i: memref<4xi32>) {
  // expected-error @+1 {{expected a float output for 'sum', found 'i32' (only argmax and argmin write indices)}}
  tile.reduce sum %x -> %i axis = 1 : memref<4x8xf32> -> memref<4xi32>
  return
}

// -----

func.func @norm_shape(%x: memref<4x8xf32>, %y: memref<4x9xf32>) {
  // expected-error @+1 {{expected dimension 1 of the output ('memref<4x9xf32>') to be 8 like the input ('memref<4x8xf32>')}}
  tile.norm rms %x -> %y : memref<4x8xf32> -> memref<4x9xf32>
  return
}

// -----

func.func @norm_residual_shape(%x: memref<4x8xf32>, %r: memref<8xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{expected the residual ('memref<8xf32>') to have rank 2 like the input ('memref<4x8xf32>')}}
  tile.norm rms %x residual(%r : memref<8xf32>) -> %y : memref<4x8xf32> -> memref<4x8xf32>
  return
}

// -----

func.func @norm_residual_out_alone(%x: memref<4x8xf32>, %y: memref<4x8xf32>, %h: memref<4x8xf32>) {
  // expected-error @+1 {{expected a residual input with 'residual_out' (it receives input + residual)}}
  tile.norm layer %x -> %y residual_out(%h : memref<4x8xf32>) : memref<4x8xf32> -> memref<4x8xf32>
  return
}

// -----

func.func @norm_weight_length(%x: memref<4x8xf32>, %y: memref<4x8xf32>, %w: memref<4xf32>) {
  // expected-error @+1 {{expected the weight length (4) to equal the last dimension of the input (8)}}
  tile.norm rms %x -> %y weight(%w : memref<4xf32>) : memref<4x8xf32> -> memref<4x8xf32>
  return
}

// -----

func.func @norm_negative_eps(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{expected eps to be finite and non-negative, found -1}}
  tile.norm rms %x -> %y eps(-1.0) : memref<4x8xf32> -> memref<4x8xf32>
  return
}

// -----

func.func @norm_kind(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [layer, rms]}}
  tile.norm batch %x -> %y : memref<4x8xf32> -> memref<4x8xf32>
  return
}

// -----

func.func @attention_rank(%q: memref<2x4x8xf32>, %k: memref<2x4x8xf32>, %v: memref<2x4x8xf32>, %o: memref<2x4x8xf32>) {
  // expected-error @+1 {{operand #0 must be 4D memref of 32-bit float or 16-bit float or bfloat16 type values}}
  tile.attention %q, %k, %v -> %o : memref<2x4x8xf32>, memref<2x4x8xf32>, memref<2x4x8xf32> -> memref<2x4x8xf32>
  return
}

// -----

func.func @attention_head_size(%q: memref<1x4x8x64xf32>, %k: memref<1x4x8x32xf32>, %v: memref<1x4x8x64xf32>, %o: memref<1x4x8x64xf32>) {
  // expected-error @+1 {{expected dimension 3 of K ('memref<1x4x8x32xf32>') to be 64 (D, the head size of Q), found 32}}
  tile.attention %q, %k, %v -> %o : memref<1x4x8x64xf32>, memref<1x4x8x32xf32>, memref<1x4x8x64xf32> -> memref<1x4x8x64xf32>
  return
}

// -----

func.func @attention_keys(%q: memref<1x4x8x64xf32>, %k: memref<1x4x8x64xf32>, %v: memref<1x4x9x64xf32>, %o: memref<1x4x8x64xf32>) {
  // expected-error @+1 {{expected dimension 2 of V ('memref<1x4x9x64xf32>') to be 8 (Sk, the keys of K), found 9}}
  tile.attention %q, %k, %v -> %o : memref<1x4x8x64xf32>, memref<1x4x8x64xf32>, memref<1x4x9x64xf32> -> memref<1x4x8x64xf32>
  return
}

// -----

func.func @attention_groups(%q: memref<1x6x8x64xf32>, %k: memref<1x4x8x64xf32>, %v: memref<1x4x8x64xf32>, %o: memref<1x6x8x64xf32>) {
  // expected-error @+1 {{expected the heads of Q (6) to be a multiple of the heads of K and V (4) (grouped-query attention)}}
  tile.attention %q, %k, %v -> %o : memref<1x6x8x64xf32>, memref<1x4x8x64xf32>, memref<1x4x8x64xf32> -> memref<1x6x8x64xf32>
  return
}

// -----

func.func @attention_lengths(%q: memref<2x4x8x64xf32>, %k: memref<2x4x8x64xf32>, %v: memref<2x4x8x64xf32>, %o: memref<2x4x8x64xf32>, %l: memref<3xi32>) {
  // expected-error @+1 {{expected dimension 0 of key_lengths ('memref<3xi32>') to be 2 (B, the batch of Q), found 3}}
  tile.attention %q, %k, %v -> %o key_lengths(%l : memref<3xi32>) : memref<2x4x8x64xf32>, memref<2x4x8x64xf32>, memref<2x4x8x64xf32> -> memref<2x4x8x64xf32>
  return
}

// -----

func.func @attention_bias_heads(%q: memref<2x4x8x16xf32>, %k: memref<2x4x8x16xf32>, %v: memref<2x4x8x16xf32>, %o: memref<2x4x8x16xf32>, %b: memref<2x3x8x8xf32>) {
  // expected-error @+1 {{expected dimension 1 of the bias ('memref<2x3x8x8xf32>') to be 1 or 4 (H, the heads of Q), found 3}}
  tile.attention %q, %k, %v -> %o bias(%b : memref<2x3x8x8xf32>) : memref<2x4x8x16xf32>, memref<2x4x8x16xf32>, memref<2x4x8x16xf32> -> memref<2x4x8x16xf32>
  return
}

// -----

func.func @attention_bias_keys(%q: memref<2x4x8x16xf32>, %k: memref<2x4x8x16xf32>, %v: memref<2x4x8x16xf32>, %o: memref<2x4x8x16xf32>, %b: memref<1x1x8x9xf32>) {
  // expected-error @+1 {{expected dimension 3 of the bias ('memref<1x1x8x9xf32>') to be 8 (Sk, the keys of K), found 9}}
  tile.attention %q, %k, %v -> %o bias(%b : memref<1x1x8x9xf32>) : memref<2x4x8x16xf32>, memref<2x4x8x16xf32>, memref<2x4x8x16xf32> -> memref<2x4x8x16xf32>
  return
}

// -----

func.func @attention_lse_queries(%q: memref<2x4x8x16xf32>, %k: memref<2x4x8x16xf32>, %v: memref<2x4x8x16xf32>, %o: memref<2x4x8x16xf32>, %l: memref<2x4x7xf32>) {
  // expected-error @+1 {{expected dimension 2 of lse ('memref<2x4x7xf32>') to be 8 (Sq, the queries of Q), found 7}}
  tile.attention %q, %k, %v -> %o lse(%l : memref<2x4x7xf32>) : memref<2x4x8x16xf32>, memref<2x4x8x16xf32>, memref<2x4x8x16xf32> -> memref<2x4x8x16xf32>
  return
}

// -----

func.func @attention_window(%q: memref<2x4x8x16xf32>, %k: memref<2x4x8x16xf32>, %v: memref<2x4x8x16xf32>, %o: memref<2x4x8x16xf32>) {
  // expected-error @+1 {{expected the window's left extent to be -1 (unbounded) or at least 0, found -2}}
  tile.attention %q, %k, %v -> %o window(-2, 0) : memref<2x4x8x16xf32>, memref<2x4x8x16xf32>, memref<2x4x8x16xf32> -> memref<2x4x8x16xf32>
  return
}

// -----

func.func @attention_aligned(%q: memref<2x4x8x16xf32>, %k: memref<2x4x8x16xf32>, %v: memref<2x4x8x16xf32>, %o: memref<2x4x8x16xf32>) {
  // expected-error @+1 {{aligned(...) places the causal diagonal and the window; it needs `causal` or `window(left, right)`}}
  tile.attention %q, %k, %v -> %o aligned(top_left) : memref<2x4x8x16xf32>, memref<2x4x8x16xf32>, memref<2x4x8x16xf32> -> memref<2x4x8x16xf32>
  return
}

// -----

func.func @attention_softcap(%q: memref<2x4x8x16xf32>, %k: memref<2x4x8x16xf32>, %v: memref<2x4x8x16xf32>, %o: memref<2x4x8x16xf32>) {
  // expected-error @+1 {{expected softcap(c) with a finite c >= 0 (0: no capping), found -1}}
  tile.attention %q, %k, %v -> %o softcap(-1.0) : memref<2x4x8x16xf32>, memref<2x4x8x16xf32>, memref<2x4x8x16xf32> -> memref<2x4x8x16xf32>
  return
}

// -----

func.func @attention_dropout(%q: memref<2x4x8x16xf32>, %k: memref<2x4x8x16xf32>, %v: memref<2x4x8x16xf32>, %o: memref<2x4x8x16xf32>) {
  // expected-error @+1 {{expected a dropout probability in [0, 1), found 1}}
  tile.attention %q, %k, %v -> %o dropout(1.0, 3) : memref<2x4x8x16xf32>, memref<2x4x8x16xf32>, memref<2x4x8x16xf32> -> memref<2x4x8x16xf32>
  return
}

// -----

func.func @attention_dropout_rule(%q: memref<2x4x8x16xf32>, %k: memref<2x4x8x16xf32>, %v: memref<2x4x8x16xf32>, %o: memref<2x4x8x16xf32>) {
  // expected-error @+1 {{dropout_rule(...) needs dropout(p, seed)}}
  tile.attention %q, %k, %v -> %o dropout_rule(lcg) : memref<2x4x8x16xf32>, memref<2x4x8x16xf32>, memref<2x4x8x16xf32> -> memref<2x4x8x16xf32>
  return
}

// -----

func.func @attention_window_side(%q: memref<2x4x8x16xf32>, %k: memref<2x4x8x16xf32>, %v: memref<2x4x8x16xf32>, %o: memref<2x4x8x16xf32>) {
  // expected-error @+1 {{expected both sides of the window, window(left, right)}}
  "tile.attention"(%q, %k, %v, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>, window_left = 3 : i64}> : (memref<2x4x8x16xf32>, memref<2x4x8x16xf32>, memref<2x4x8x16xf32>, memref<2x4x8x16xf32>) -> ()
  return
}

// -----

func.func @attention_dropout_seed(%q: memref<2x4x8x16xf32>, %k: memref<2x4x8x16xf32>, %v: memref<2x4x8x16xf32>, %o: memref<2x4x8x16xf32>) {
  // expected-error @+1 {{expected dropout(p, seed) with both its probability and its seed}}
  "tile.attention"(%q, %k, %v, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>, dropout = 0.5 : f32}> : (memref<2x4x8x16xf32>, memref<2x4x8x16xf32>, memref<2x4x8x16xf32>, memref<2x4x8x16xf32>) -> ()
  return
}

// -----

func.func @attention_output(%q: memref<1x4x8x64xf32>, %k: memref<1x4x8x64xf32>, %v: memref<1x4x8x32xf32>, %o: memref<1x4x8x64xf32>) {
  // expected-error @+1 {{expected dimension 3 of O ('memref<1x4x8x64xf32>') to be 32 (Dv, the head size of V), found 64}}
  tile.attention %q, %k, %v -> %o : memref<1x4x8x64xf32>, memref<1x4x8x64xf32>, memref<1x4x8x32xf32> -> memref<1x4x8x64xf32>
  return
}

// -----

func.func @rope_odd(%x: memref<4x7xf32>, %c: memref<4x3xf32>, %s: memref<4x3xf32>, %y: memref<4x7xf32>) {
  // expected-error @+1 {{expected an even last dimension (pairs of features), found 7}}
  tile.rope half %x, %c, %s -> %y : memref<4x7xf32>, memref<4x3xf32>, memref<4x3xf32> -> memref<4x7xf32>
  return
}

// -----

func.func @rope_table_columns(%x: memref<4x8xf32>, %c: memref<4x8xf32>, %s: memref<4x8xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{expected dimension 1 of the cos table ('memref<4x8xf32>') to be 4 (half the last dimension of the input), found 8}}
  tile.rope half %x, %c, %s -> %y : memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32> -> memref<4x8xf32>
  return
}

// -----

func.func @rope_table_rows(%x: memref<2x4x8xf32>, %c: memref<5x4xf32>, %s: memref<5x4xf32>, %y: memref<2x4x8xf32>) {
  // expected-error @+1 {{expected dimension 0 of the cos table ('memref<5x4xf32>') to be 4 (the positions of the input), found 5}}
  tile.rope interleaved %x, %c, %s -> %y : memref<2x4x8xf32>, memref<5x4xf32>, memref<5x4xf32> -> memref<2x4x8xf32>
  return
}

// -----

func.func @rope_tables_differ(%x: memref<4x8xf32>, %c: memref<4x4xf32>, %s: memref<4x2xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{expected dimension 1 of the sin table ('memref<4x2xf32>') to be 4 like the cos table ('memref<4x4xf32>')}}
  tile.rope half %x, %c, %s -> %y : memref<4x8xf32>, memref<4x4xf32>, memref<4x2xf32> -> memref<4x8xf32>
  return
}

// -----

func.func @rope_rank(%x: memref<8xf32>, %c: memref<1x4xf32>, %s: memref<1x4xf32>, %y: memref<8xf32>) {
  // expected-error @+1 {{expected the input ('memref<8xf32>') to have rank 2 or more: [..., positions, features]}}
  tile.rope half %x, %c, %s -> %y : memref<8xf32>, memref<1x4xf32>, memref<1x4xf32> -> memref<8xf32>
  return
}
