// How the arbiter runs a candidate: the compiler builds a probe kernel of it for the target
// (host: JIT'd code timed with a monotonic clock; nvptx: a loaded module timed with CUDA events
// on a non-default stream). Keeps the arbiter free of the compiler.
#ifndef TESSERA_ARBITER_PROBER_H_
#define TESSERA_ARBITER_PROBER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "arbiter/arbitration_point.h"
#include "arbiter/candidate.h"
#include "arbiter/matmul_probe.h"
#include "arbiter/op_probe.h"

namespace tessera::arbiter {

/// One candidate compiled for one problem form.
class ProbeKernel {
 public:
  virtual ~ProbeKernel() = default;
  /// Runs once on `inputs` and returns C (M×N, row-major). Binds the inputs for Time.
  virtual absl::StatusOr<std::vector<float>> Run(const MatmulInputs& inputs) = 0;
  /// Seconds per run over `repetitions` back-to-back runs on the inputs of the last Run.
  virtual absl::StatusOr<double> Time(int repetitions) = 0;
  /// How long the last Run's own run took (a cold run: no copies, no warm-up), when the kernel
  /// knows without a timed run; 0 when it does not.
  virtual double LastRunSeconds() const { return 0; }

  /// For a point with a probe_source (ops other than tile.matmul): runs the op once with every
  /// dynamic size bound to `dynamic_size` — halved while its tensors would exceed 64 MiB — on
  /// inputs from `seed` (the same for every candidate), and returns the tensors it writes,
  /// concatenated. Binds them for Time. FailedPrecondition when the op cannot be probed so
  /// (the message says why: an integer tensor, a shape contract the bound sizes break).
  virtual absl::StatusOr<std::vector<float>> RunOp(int64_t dynamic_size, uint32_t seed);
  /// The shape of the op's first tensor in the last RunOp, e.g. "64x1000".
  virtual std::string BoundShape() const { return ""; }
  /// The tensors the last RunOp wrote, in the order of its values (empty: one f32 output).
  virtual std::vector<OutputSegment> OutputSegments() const { return {}; }
};

class Prober {
 public:
  virtual ~Prober() = default;
  /// The machine probes run on, e.g. "AMD EPYC 7B13 (2 threads)" or "NVIDIA H200 (sm_90)".
  virtual std::string Device() const = 0;
  /// How time is measured, e.g. "host steady_clock".
  virtual std::string TimingSource() const = 0;
  /// "" when probes can run here; else why not (e.g. no CUDA device).
  virtual std::string Unavailable() const = 0;
  /// A probe kernel of `candidate` for `point`'s op: with `problem`'s sizes fixed in the IR
  /// (as the op will be compiled), or with every size dynamic (`problem` null) so one kernel
  /// serves every accuracy probe.
  virtual absl::StatusOr<std::unique_ptr<ProbeKernel>> Prepare(const ArbitrationPoint& point,
                                                               const Candidate& candidate,
                                                               const MatmulProblem* problem) = 0;
};

}  // namespace tessera::arbiter

#endif  // TESSERA_ARBITER_PROBER_H_
