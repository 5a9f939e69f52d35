// What JITLink trusts in an object and a package cannot promise: that each relocation lies
// inside the block it patches. JITLink writes a fixup at `block + offset` unchecked, so an
// object whose relocation offset points past its section (a damaged or forged package) would
// have the linker write outside the memory it allocated. HostExecutable::Load checks every
// graph before it is linked, before any pass reads or writes a block's bytes.
#ifndef TESSERA_RUNTIME_LINK_GRAPH_CHECKS_H_
#define TESSERA_RUNTIME_LINK_GRAPH_CHECKS_H_

namespace llvm {
class Error;
namespace jitlink {
class LinkGraph;
}  // namespace jitlink
}  // namespace llvm

namespace tessera::runtime {

/// Fails, naming the section, block offset and edge, unless every x86-64 relocation edge of
/// `graph` (with the instruction bytes before it that GOT relaxation rewrites) lies inside its
/// block and every defined symbol lies inside its block, no zero-fill block is patched, and no
/// section is one JITLink's passes parse or adopt (.eh_frame, `$__…`). A relocation kind it
/// cannot bound fails too. For graphs of other architectures it fails: the host JIT links only
/// x86-64.
llvm::Error CheckLinkGraphBounds(llvm::jitlink::LinkGraph& graph);

}  // namespace tessera::runtime

#endif  // TESSERA_RUNTIME_LINK_GRAPH_CHECKS_H_
