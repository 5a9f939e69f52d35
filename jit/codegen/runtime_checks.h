// Run-time checks of user IR that report instead of aborting: MLIR's runtime verification
// (-generate-runtime-verification) inserts `cf.assert`s before every memref access user IR makes
// itself; this pass turns each into a call of tessera_rt_check_failed(id) when it fails
// (runtime/checked_call.h), with the messages kept on the module.
#ifndef TESSERA_JIT_CODEGEN_RUNTIME_CHECKS_H_
#define TESSERA_JIT_CODEGEN_RUNTIME_CHECKS_H_

#include <cstdint>

namespace tessera::jit {

/// The most bytes one `memref.alloc` of user IR may take; larger (or a negative size) fails the
/// invocation with the op's location, as does an allocation the system refuses.
inline constexpr int64_t kMaxAllocBytes = int64_t{1} << 34;

/// The most bytes one `memref.alloca` of user IR may take (static shapes only: the stack).
inline constexpr int64_t kMaxAllocaBytes = int64_t{64} << 10;

/// The module attribute (an array of strings, indexed by check id) where the pass leaves the
/// message of every check: `file:line:col: what failed`.
inline constexpr char kRuntimeCheckMessagesAttr[] = "tessera_jit.runtime_checks";

/// Guards user IR at run time, in the functions of a module (not inside `gpu.module`s):
/// * before every `memref.alloc`, its byte size is checked against kMaxAllocBytes (and each
///   dynamic size against 0), after it, the pointer against NULL;
/// * integer division and remainder (`arith.divsi/divui/remsi/remui/ceildivsi/ceildivui/
///   floordivsi`) never trap: a zero divisor, or INT_MIN / -1, is replaced by 1 (the result is
///   then the dividend, or 0 for a remainder) — no SIGFPE in the caller's process;
/// * then every `cf.assert` (these and MLIR's runtime verification) becomes
///   `scf.if (!cond) call @tessera_rt_check_failed(id)`.
/// That pass is tessera-lower-runtime-checks: createLowerRuntimeChecks() in jit/passes.h.

}  // namespace tessera::jit

#endif  // TESSERA_JIT_CODEGEN_RUNTIME_CHECKS_H_
