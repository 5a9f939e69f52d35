// The compiler's own identity: 16 hex digits of a SHA-256 over its sources, computed by the
// build (//jit:build_identity_cc). Two builds from the same sources agree; any change to a
// source that shapes compiled code changes it.
#ifndef TESSERA_JIT_BUILD_IDENTITY_H_
#define TESSERA_JIT_BUILD_IDENTITY_H_

namespace tessera::jit {

extern const char kBuildIdentity[];

}  // namespace tessera::jit

#endif  // TESSERA_JIT_BUILD_IDENTITY_H_
