// RUN: tessera-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{'tessera.deterministic' expects a unit attribute or a dictionary {seed = N, level = "run_to_run" | "batch_invariant"}, found "yes"}}
func.func @deterministic_wrong_kind() attributes {tessera.deterministic = "yes"} {
  return
}

// -----

// expected-error @+1 {{'tessera.deterministic' has unknown key 'sed'; expected only 'seed' and 'level'}}
func.func @deterministic_unknown_key() attributes {tessera.deterministic = {sed = 1}} {
  return
}

// -----

// expected-error @+1 {{'tessera.deterministic' expects 'level' to be "run_to_run" or "batch_invariant", found "per_row"}}
func.func @deterministic_unknown_level() attributes {tessera.deterministic = {level = "per_row"}} {
  return
}

// -----

// expected-error @+1 {{'tessera.deterministic' expects 'seed' to be a non-negative integer of at most 64 bits, found -3 : i64}}
func.func @deterministic_negative_seed() attributes {tessera.deterministic = {seed = -3}} {
  return
}

// -----

// expected-error @+1 {{'tessera.deterministic' expects 'seed' to be a non-negative integer of at most 64 bits, found 1.500000e+00 : f64}}
func.func @deterministic_float_seed() attributes {tessera.deterministic = {seed = 1.5}} {
  return
}

// -----

// expected-error @+1 {{'tessera.deterministic' is only valid on a function, found it on 'builtin.module'}}
module attributes {tessera.deterministic} {
}

// -----

// expected-error @+1 {{unknown attribute 'tessera.fast'; the tessera dialect defines only 'tessera.deterministic'}}
func.func @unknown_tessera_attribute() attributes {tessera.fast} {
  return
}

// -----

// expected-error @+1 {{'tessera.determinism' declares a raw kernel's determinism and is only valid on a 'gpu.func', found it on 'func.func' (a function requests determinism with 'tessera.deterministic')}}
func.func @determinism_on_a_function() attributes {tessera.determinism = "deterministic"} {
  return
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{'tessera.determinism' must be "deterministic" or "nondeterministic", found "mostly"}}
    gpu.func @unknown_determinism() kernel attributes {tessera.determinism = "mostly"} {
      gpu.return
    }
  }
}

// -----

// expected-error @+1 {{'tessera.accuracy' expects a dictionary {atol = F, rtol = F} with at least one key, found {}}}
func.func @accuracy_empty() attributes {tessera.accuracy = {}} {
  return
}

// -----

// expected-error @+1 {{'tessera.accuracy' has unknown key 'tol'; expected only 'atol' and 'rtol'}}
func.func @accuracy_unknown_key() attributes {tessera.accuracy = {tol = 1.0e-3}} {
  return
}

// -----

// expected-error @+1 {{'tessera.accuracy' expects 'rtol' to be a finite non-negative float, found -1.000000e-05 : f64}}
func.func @accuracy_negative() attributes {tessera.accuracy = {atol = 1.0e-3, rtol = -1.0e-5}} {
  return
}

// -----

// expected-error @+1 {{'tessera.accuracy' expects 'atol' to be a finite non-negative float, found 1 : i64}}
func.func @accuracy_integer() attributes {tessera.accuracy = {atol = 1}} {
  return
}

// -----

func.func @outer() {
  // expected-error @+1 {{'tessera.accuracy' is only valid on a function, found it on 'arith.constant'}}
  %c = arith.constant {tessera.accuracy = {atol = 1.0e-3}} 0 : index
  return
}

// -----

func.func @candidate_not_a_string(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+1 {{'tessera.candidate' is a non-empty string on a Tile op (not tile.yield): the candidate id to restrict its arbitration to}}
  tile.softmax %x -> %y {tessera.candidate = 3 : i32} : memref<?x?xf32> -> memref<?x?xf32>
  return
}

// -----

// expected-error @+1 {{'tessera.candidate' is a non-empty string on a Tile op}}
func.func @candidate_on_a_function() attributes {tessera.candidate = "compiled"} {
  return
}

// -----

func.func @candidate_empty(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  // expected-error @+1 {{'tessera.candidate' is a non-empty string on a Tile op (not tile.yield)}}
  tile.softmax %x -> %y {tessera.candidate = ""} : memref<?x?xf32> -> memref<?x?xf32>
  return
}

// -----

func.func @candidate_on_yield(%x: memref<8xf32>, %y: memref<8xf32>) {
  tile.map ins(%x : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%v: f32):
    // expected-error @+1 {{'tessera.candidate' is a non-empty string on a Tile op (not tile.yield)}}
    tile.yield {tessera.candidate = "compiled"} %v : f32
  }
  return
}

// -----

func.func @candidate_conflicts_with_delegate(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>) {
  // expected-error @+1 {{'tessera.candidate' ("compiled") and 'delegate' ("openblas") force different candidates; set one of them}}
  tile.matmul %a, %b -> %c {delegate = "openblas", tessera.candidate = "compiled"} : memref<8x8xf32>, memref<8x8xf32> -> memref<8x8xf32>
  return
}

// -----

func.func @candidate_agrees_with_delegate(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>) {
  tile.matmul %a, %b -> %c {delegate = "openblas", tessera.candidate = "openblas"} : memref<8x8xf32>, memref<8x8xf32> -> memref<8x8xf32>
  return
}
