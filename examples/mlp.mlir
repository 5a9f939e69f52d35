// A two-layer MLP classifier head: hidden = relu(x·W1 + b1), logits = hidden·W2 + b2,
// probs = softmax(logits), and the per-batch mean confidence of the most likely class.
// The batch size is dynamic; feature sizes are static.
func.func @mlp(%x: memref<?x784xf32>,
               %w1: memref<784x256xf32>, %b1: memref<256xf32>,
               %w2: memref<256x10xf32>, %b2: memref<10xf32>,
               %hidden: memref<?x256xf32>, %logits: memref<?x10xf32>,
               %probs: memref<?x10xf32>, %top: memref<?xf32>, %confidence: memref<f32>)
    attributes {tessera.deterministic = {seed = 2026}} {
  tile.matmul %x, %w1 -> %hidden bias(%b1 : memref<256xf32>) activation(relu)
      : memref<?x784xf32>, memref<784x256xf32> -> memref<?x256xf32>
  tile.matmul %hidden, %w2 -> %logits bias(%b2 : memref<10xf32>)
      : memref<?x256xf32>, memref<256x10xf32> -> memref<?x10xf32>
  tile.softmax %logits -> %probs : memref<?x10xf32> -> memref<?x10xf32>
  tile.reduce max %probs -> %top axis = 1 : memref<?x10xf32> -> memref<?xf32>
  tile.reduce mean %top -> %confidence axis = 0 : memref<?xf32> -> memref<f32>
  return
}
