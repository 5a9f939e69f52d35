// An arbitration point: one Tile op, described by everything that decides which candidate may
// and should run it (docs/design.md §2, §7). Built from the IR by the compiler; MLIR-free.
#ifndef TESSERA_ARBITER_ARBITRATION_POINT_H_
#define TESSERA_ARBITER_ARBITRATION_POINT_H_

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::arbiter {

struct ArbitrationPoint {
  std::string op;        ///< "tile.matmul", "tile.map", …
  std::string location;  ///< "file:line:col"
  std::string function;  ///< the enclosing entry function
  std::string target;    ///< "host" or "nvptx"
  std::string arch;      ///< "host" or the GPU arch, e.g. "sm_90"
  std::string device;    ///< what runs it: CPU model and cores, or GPU name (filled by the prober)
  /// Element types of the operands, e.g. {"f32", "f32", "f32"} (A, B, C; then bias).
  std::vector<std::string> element_types;
  /// tile.matmul: {M, N, K}; -1 for a size only known at run time.
  std::vector<int64_t> shape;
  bool transpose_a = false;
  bool transpose_b = false;
  bool bias = false;
  std::string activation = "none";  ///< none | relu | gelu | silu | gelu_tanh
  bool residual = false;            ///< a residual added after the activation
  std::string numeric_policy = "f32";
  std::string layout = "row-major";  ///< "strided" when an operand has a non-identity layout;
                                     ///< "batched" for a matmul with batch dimensions
  bool deterministic = false;        ///< a deterministic function or compile
  /// … at the batch-invariant level (implies `deterministic`): each row of the result may
  /// not depend on how many rows (M) the call has.
  bool batch_invariant = false;
  /// For a Tile op other than tile.matmul: the op alone as `func.func @probe`, one argument per
  /// operand (and per value its region uses from outside), which the prober compiles per
  /// candidate; its digest is part of the decision keys (two maps of one shape but different
  /// bodies are different points). Empty for tile.matmul (its probes are built from the fields
  /// above). Not part of the record's JSON.
  std::string probe_source;
  /// A candidate the IR or the options force ("" when none), and which of the two did.
  std::string forced;
  std::string forced_by;  ///< "attribute `delegate`" or "option `matmul_delegate`"

  /// The shape bucket decisions are shared across: each static size rounded up to a power of
  /// two, "?" for a dynamic one; e.g. "128x256x1024".
  std::string ShapeBucket() const;
  /// The shape as written, e.g. "100x256x?".
  std::string ShapeText() const;
  /// The op's data movement: transposes and fused epilogue, e.g. "A^T,bias+relu" or "plain".
  std::string Movement() const;
  /// A, B and C (and bias) element types joined, e.g. "f32,f32->f32".
  std::string DtypeText() const;
  /// "none", "run_to_run" or "batch_invariant".
  std::string DeterminismLevel() const;
  bool HasFusedEpilogue() const { return bias || activation != "none" || residual; }
};

}  // namespace tessera::arbiter

#endif  // TESSERA_ARBITER_ARBITRATION_POINT_H_
