#include "runtime/link_graph_checks.h"

#include <cstdint>
#include <string>

#include "llvm/ExecutionEngine/JITLink/JITLink.h"
#include "llvm/ExecutionEngine/JITLink/x86_64.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"

namespace tessera::runtime {
namespace {

namespace x86_64 = llvm::jitlink::x86_64;

/// The bytes an x86-64 fixup touches, relative to its offset: `before` bytes of the
/// instruction that relaxation reads and rewrites (REX prefix, opcode, ModRM), then `size`.
struct FixupExtent {
  uint64_t before = 0;
  uint64_t size = 0;
};

bool X86FixupExtent(llvm::jitlink::Edge::Kind kind, FixupExtent& extent) {
  switch (kind) {
    case x86_64::Pointer64:
    case x86_64::Delta64:
    case x86_64::NegDelta64:
    case x86_64::Size64:
    case x86_64::Delta64FromGOT:
    case x86_64::RequestGOTAndTransformToDelta64:
    case x86_64::RequestGOTAndTransformToDelta64FromGOT:
      extent = {0, 8};
      return true;
    case x86_64::Pointer32:
    case x86_64::Pointer32Signed:
    case x86_64::Delta32:
    case x86_64::NegDelta32:
    case x86_64::Size32:
    case x86_64::BranchPCRel32:
    case x86_64::PCRel32:
    case x86_64::BranchPCRel32ToPtrJumpStub:
    case x86_64::BranchPCRel32ToPtrJumpStubBypassable:
    case x86_64::RequestGOTAndTransformToDelta32:
    case x86_64::RequestTLSDescInGOTAndTransformToDelta32:
      extent = {0, 4};
      return true;
    case x86_64::PCRel32GOTLoadRelaxable:
    case x86_64::RequestGOTAndTransformToPCRel32GOTLoadRelaxable:
      extent = {2, 4};  // opcode, ModRM
      return true;
    case x86_64::PCRel32GOTLoadREXRelaxable:
    case x86_64::RequestGOTAndTransformToPCRel32GOTLoadREXRelaxable:
    case x86_64::PCRel32TLVPLoadREXRelaxable:
    case x86_64::RequestTLVPAndTransformToPCRel32TLVPLoadREXRelaxable:
      extent = {3, 4};  // REX, opcode, ModRM
      return true;
    case x86_64::Pointer16:
    case x86_64::Delta16:
      extent = {0, 2};
      return true;
    case x86_64::Pointer8:
    case x86_64::Delta8:
      extent = {0, 1};
      return true;
    default:
      return false;
  }
}

llvm::Error Refuse(const llvm::jitlink::LinkGraph& graph, const std::string& what) {
  return llvm::make_error<llvm::StringError>(
      llvm::formatv("malformed object {0}: {1}", graph.getName(), what).str(),
      llvm::inconvertibleErrorCode());
}

llvm::Error Malformed(const llvm::jitlink::LinkGraph& graph, const llvm::jitlink::Block& block,
                      const std::string& what) {
  return Refuse(graph, llvm::formatv("in section {0} (block of {1} bytes): {2}",
                                     block.getSection().getName(), block.getSize(), what)
                           .str());
}

}  // namespace

llvm::Error CheckLinkGraphBounds(llvm::jitlink::LinkGraph& graph) {
  if (graph.getTargetTriple().getArch() != llvm::Triple::x86_64) {
    return Refuse(graph, "it is for " + graph.getTargetTriple().str() +
                             "; the host JIT links x86-64 code only");
  }
  // (Also refused by the object's shape check: sections JITLink's passes would parse or adopt
  // as their own.)
  for (llvm::jitlink::Section& section : graph.sections()) {
    if (section.getName() == ".eh_frame" || section.getName().starts_with("$__")) {
      return Refuse(graph, "host code has no section " + section.getName().str());
    }
  }
  for (llvm::jitlink::Block* block : graph.blocks()) {
    const uint64_t size = block->getSize();
    // A zero-fill block has no working memory before it is allocated: JITLink would patch it
    // at address `offset`.
    if (block->isZeroFill() && !block->edges_empty()) {
      return Malformed(graph, *block, "relocations patch a block with no contents");
    }
    for (const llvm::jitlink::Edge& edge : block->edges()) {
      if (!edge.isRelocation()) continue;  // keep-alive edges touch no bytes
      FixupExtent extent;
      if (!X86FixupExtent(edge.getKind(), extent)) {
        return Malformed(graph, *block,
                         llvm::formatv("relocation of unsupported kind {0} at offset {1}",
                                       graph.getEdgeKindName(edge.getKind()), edge.getOffset())
                             .str());
      }
      const uint64_t offset = edge.getOffset();
      if (offset < extent.before || offset > size || extent.size > size - offset) {
        return Malformed(
            graph, *block,
            llvm::formatv("{0} relocation at offset {1} patches bytes [{2}, {3}) outside it",
                          graph.getEdgeKindName(edge.getKind()), offset,
                          static_cast<int64_t>(offset) - static_cast<int64_t>(extent.before),
                          offset + extent.size)
                .str());
      }
    }
  }
  for (llvm::jitlink::Symbol* symbol : graph.defined_symbols()) {
    const llvm::jitlink::Block& block = symbol->getBlock();
    const uint64_t offset = symbol->getOffset(), size = symbol->getSize();
    if (offset > block.getSize() || size > block.getSize() - offset) {
      return Malformed(
          graph, block,
          llvm::formatv("symbol {0} at offset {1} of {2} bytes runs outside it",
                        symbol->hasName() ? std::string(*symbol->getName()) : "(unnamed)", offset,
                        size)
              .str());
    }
  }
  return llvm::Error::success();
}

}  // namespace tessera::runtime
