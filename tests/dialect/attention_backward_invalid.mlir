// RUN: tessera-opt %s -split-input-file -verify-diagnostics

func.func @dk_shape(%do: memref<2x4x8x16xf32>, %q: memref<2x4x8x16xf32>, %k: memref<2x2x9x16xf32>, %v: memref<2x2x9x16xf32>, %o: memref<2x4x8x16xf32>, %l: memref<2x4x8xf32>, %dq: memref<2x4x8x16xf32>, %dk: memref<2x2x8x16xf32>, %dv: memref<2x2x9x16xf32>) {
  // expected-error @+1 {{expected dimension 2 of dK ('memref<2x2x8x16xf32>') to be 9 like K ('memref<2x2x9x16xf32>')}}
  tile.attention_backward %do, %q, %k, %v, %o, %l -> %dq, %dk, %dv : memref<2x4x8x16xf32>, memref<2x4x8x16xf32>, memref<2x2x9x16xf32>, memref<2x2x9x16xf32>, memref<2x4x8x16xf32>, memref<2x4x8xf32> -> memref<2x4x8x16xf32>, memref<2x2x8x16xf32>, memref<2x2x9x16xf32>
  return
}

// -----

func.func @do_shape(%do: memref<2x4x8x15xf32>, %q: memref<2x4x8x16xf32>, %k: memref<2x2x9x16xf32>, %v: memref<2x2x9x16xf32>, %o: memref<2x4x8x16xf32>, %l: memref<2x4x8xf32>, %dq: memref<2x4x8x16xf32>, %dk: memref<2x2x9x16xf32>, %dv: memref<2x2x9x16xf32>) {
  // expected-error @+1 {{expected dimension 3 of dO ('memref<2x4x8x15xf32>') to be 16 (Dv, like O), found 15}}
  tile.attention_backward %do, %q, %k, %v, %o, %l -> %dq, %dk, %dv : memref<2x4x8x15xf32>, memref<2x4x8x16xf32>, memref<2x2x9x16xf32>, memref<2x2x9x16xf32>, memref<2x4x8x16xf32>, memref<2x4x8xf32> -> memref<2x4x8x16xf32>, memref<2x2x9x16xf32>, memref<2x2x9x16xf32>
  return
}

// -----

func.func @lse_shape(%do: memref<2x4x8x16xf32>, %q: memref<2x4x8x16xf32>, %k: memref<2x2x9x16xf32>, %v: memref<2x2x9x16xf32>, %o: memref<2x4x8x16xf32>, %l: memref<2x4x9xf32>, %dq: memref<2x4x8x16xf32>, %dk: memref<2x2x9x16xf32>, %dv: memref<2x2x9x16xf32>) {
  // expected-error @+1 {{expected dimension 2 of lse ('memref<2x4x9xf32>') to be 8 (Sq, the queries of Q), found 9}}
  tile.attention_backward %do, %q, %k, %v, %o, %l -> %dq, %dk, %dv : memref<2x4x8x16xf32>, memref<2x4x8x16xf32>, memref<2x2x9x16xf32>, memref<2x2x9x16xf32>, memref<2x4x8x16xf32>, memref<2x4x9xf32> -> memref<2x4x8x16xf32>, memref<2x2x9x16xf32>, memref<2x2x9x16xf32>
  return
}

// -----

func.func @groups(%do: memref<2x3x8x16xf32>, %q: memref<2x3x8x16xf32>, %k: memref<2x2x9x16xf32>, %v: memref<2x2x9x16xf32>, %o: memref<2x3x8x16xf32>, %l: memref<2x3x8xf32>, %dq: memref<2x3x8x16xf32>, %dk: memref<2x2x9x16xf32>, %dv: memref<2x2x9x16xf32>) {
  // expected-error @+1 {{expected the heads of Q (3) to be a multiple of the heads of K and V (2) (grouped-query attention)}}
  tile.attention_backward %do, %q, %k, %v, %o, %l -> %dq, %dk, %dv : memref<2x3x8x16xf32>, memref<2x3x8x16xf32>, memref<2x2x9x16xf32>, memref<2x2x9x16xf32>, memref<2x3x8x16xf32>, memref<2x3x8xf32> -> memref<2x3x8x16xf32>, memref<2x2x9x16xf32>, memref<2x2x9x16xf32>
  return
}

// -----

func.func @dropout(%do: memref<2x4x8x16xf32>, %q: memref<2x4x8x16xf32>, %k: memref<2x2x9x16xf32>, %v: memref<2x2x9x16xf32>, %o: memref<2x4x8x16xf32>, %l: memref<2x4x8xf32>, %dq: memref<2x4x8x16xf32>, %dk: memref<2x2x9x16xf32>, %dv: memref<2x2x9x16xf32>) {
  // expected-error @+1 {{expected a dropout probability in [0, 1), found -0.5}}
  tile.attention_backward %do, %q, %k, %v, %o, %l -> %dq, %dk, %dv dropout(-0.5, 1) : memref<2x4x8x16xf32>, memref<2x4x8x16xf32>, memref<2x2x9x16xf32>, memref<2x2x9x16xf32>, memref<2x4x8x16xf32>, memref<2x4x8xf32> -> memref<2x4x8x16xf32>, memref<2x2x9x16xf32>, memref<2x2x9x16xf32>
  return
}

// -----

func.func @aliased(%do: memref<2x4x8x16xf32>, %q: memref<2x4x8x16xf32>, %k: memref<2x2x9x16xf32>, %v: memref<2x2x9x16xf32>, %o: memref<2x4x8x16xf32>, %l: memref<2x4x8xf32>, %dq: memref<2x4x8x16xf32>, %dv: memref<2x2x9x16xf32>) {
  // expected-error @+1 {{expected dK to be a buffer of its own: it is passed as another operand too (the gradients must not alias the inputs or each other)}}
  tile.attention_backward %do, %q, %k, %v, %o, %l -> %dq, %k, %dv : memref<2x4x8x16xf32>, memref<2x4x8x16xf32>, memref<2x2x9x16xf32>, memref<2x2x9x16xf32>, memref<2x4x8x16xf32>, memref<2x4x8xf32> -> memref<2x4x8x16xf32>, memref<2x2x9x16xf32>, memref<2x2x9x16xf32>
  return
}
