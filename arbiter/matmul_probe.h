// Probe problems for tile.matmul: deterministic inputs, the plain C++ host reference (double
// accumulation) and the accuracy check `|out − ref| ≤ atol + rtol·|ref|` (selection step 5).
#ifndef TESSERA_ARBITER_MATMUL_PROBE_H_
#define TESSERA_ARBITER_MATMUL_PROBE_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "arbiter/arbitration_point.h"
#include "arbiter/candidate.h"

namespace tessera::arbiter {

/// One matmul problem: sizes plus the op's movement (transposes, epilogue).
struct MatmulProblem {
  int64_t m = 0, n = 0, k = 0;
  bool transpose_a = false;
  bool transpose_b = false;
  bool bias = false;
  std::string activation = "none";
  /// Storage of A and B (one type), and of C and the bias (one type): "f32", "f16", "bf16".
  std::string input_element = "f32";
  std::string result_element = "f32";
  std::string numeric_policy = "f32";

  /// Whether inputs lie on the coarse grid (MakeInputs): narrow storage or the tf32 policy.
  bool Narrow() const;
  /// "MxNxK".
  std::string ShapeText() const;
};

/// `point` with these sizes.
MatmulProblem ProblemFor(const ArbitrationPoint& point, int64_t m, int64_t n, int64_t k);

/// Inputs as stored: A is K×M when transposed (else M×K), B is N×K when transposed (else K×N),
/// row-major; bias has N elements (empty without bias). Uniform in [-1, 1) from `seed` — for a
/// Narrow() problem on the grid k/128 (k = -128 … 127), exact in f16, bf16 and TF32, so that
/// what the probe checks is the accumulation and the result's rounding, not the inputs'.
struct MatmulInputs {
  MatmulProblem problem;
  std::vector<float> a, b, bias;
};
MatmulInputs MakeInputs(const MatmulProblem& problem, uint32_t seed);

/// C = act(op(A)·op(B) + bias), accumulated in double; M×N row-major.
std::vector<double> ReferenceMatmul(const MatmulInputs& inputs);

/// `budget` for a result stored in `problem.result_element`: a narrower C than f32 adds one
/// of its ulps to rtol (storing the f32 result rounds it by up to half of one).
AccuracyBudget ResultBudget(const AccuracyBudget& budget, const MatmulProblem& problem);

/// Why `point` is outside what the probes cover ("" when they cover it): operands dense
/// row-major (not batched or strided) in f32, f16 or bf16; a tile.matmul under the f32, tf32
/// or fma policy (the f16 policy accumulates in f16, beyond budgets relative to a double
/// reference); any other op with its probe function (ArbitrationPoint::probe_source,
/// arbiter/op_probe.h).
std::string ProbeCoverage(const ArbitrationPoint& point);

/// The worst element of `out` against `ref` under `budget`: ratio = |out − ref| / (atol +
/// rtol·|ref|), so ≤ 1 passes; a NaN or infinite output, or a size mismatch, is +inf.
struct AccuracyCheck {
  double ratio = 0;
  double max_abs_error = 0;
  int64_t worst_index = -1;
  double allowed = 0;  ///< atol + rtol·|ref| at the worst element, as applied
};
AccuracyCheck CheckAccuracy(const std::vector<float>& out, const std::vector<double>& ref,
                            const AccuracyBudget& budget);

/// The probes every candidate is checked on: the op's own shape (rows and columns clipped to
/// 64, K kept up to 4096; dynamic sizes probed at 64 / 256), a small ragged one (7×13×5) and
/// a large-K one (16×16×4096) where accumulated rounding shows against relative bounds.
std::vector<MatmulProblem> AccuracyProbes(const ArbitrationPoint& point);

/// The most bytes the buffers of the timed problem (A, B and C in f32) may take.
inline constexpr double kTimedProblemBudgetBytes = 64.0 * 1024 * 1024;

/// The problem timed: the op's shape, a dynamic size taken as 256 — capped so that its buffers
/// fit kTimedProblemBudgetBytes and it has at most `max_macs` multiply-adds (M·N·K; the
/// arbiter's time budget sets it), the largest of M, N, K halved until both hold. When it was
/// capped, `*capped_why` (if given) says from which shape and why.
MatmulProblem TimedProblem(const ArbitrationPoint& point,
                           double max_macs = std::numeric_limits<double>::infinity(),
                           std::string* capped_why = nullptr);

/// M·N·K of `problem` (what one run costs, for estimates).
double Macs(const MatmulProblem& problem);

}  // namespace tessera::arbiter

#endif  // TESSERA_ARBITER_MATMUL_PROBE_H_
