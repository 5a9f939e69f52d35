// The arbiter's probes, run through the compiler: each candidate of a tile.matmul is compiled
// alone in a probe module (`@probe(A, B, C[, bias])`, forced onto that candidate, unarbitrated)
// and run on the host (timed with steady_clock) or on a GPU (device buffers, timed with CUDA
// events on a non-default stream).
#ifndef TESSERA_JIT_ARBITRATION_PROBERS_H_
#define TESSERA_JIT_ARBITRATION_PROBERS_H_

#include <memory>
#include <string>

#include "arbiter/arbitration_point.h"
#include "arbiter/matmul_probe.h"
#include "arbiter/prober.h"
#include "jit/compile_options.h"

namespace tessera::jit {

/// The prober for `options.target`; it compiles probe modules with `options` (registry,
/// toolkit, arch, opt level).
std::unique_ptr<arbiter::Prober> MakeProber(const CompileOptions& options);

/// The probe module of `point`'s tile.matmul: sizes from `problem`, or all dynamic when null.
std::string MatmulProbeModule(const arbiter::ArbitrationPoint& point,
                              const arbiter::MatmulProblem* problem);

}  // namespace tessera::jit

#endif  // TESSERA_JIT_ARBITRATION_PROBERS_H_
