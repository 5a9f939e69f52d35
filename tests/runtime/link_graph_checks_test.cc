// runtime/link_graph_checks.h on link graphs built by hand: each relocation kind bounded by its
// width (and the instruction bytes GOT relaxation rewrites before it), symbols bounded by their
// block. The package tests (tests/service/package_test.cc) refuse a real object whose
// relocation was moved outside its section through the whole load path.
#include "runtime/link_graph_checks.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/ExecutionEngine/JITLink/JITLink.h"
#include "llvm/ExecutionEngine/JITLink/x86_64.h"
#include "llvm/ExecutionEngine/Orc/Shared/MemoryFlags.h"
#include "llvm/ExecutionEngine/Orc/SymbolStringPool.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"

namespace tessera::runtime {
namespace {

namespace jitlink = llvm::jitlink;
namespace x86_64 = llvm::jitlink::x86_64;
using ::testing::HasSubstr;

constexpr size_t kBlockBytes = 16;

struct Graph {
  explicit Graph(const char* triple = "x86_64-unknown-linux-gnu")
      : graph(std::make_unique<jitlink::LinkGraph>(
            "test-object", std::make_shared<llvm::orc::SymbolStringPool>(), llvm::Triple(triple),
            llvm::SubtargetFeatures(), x86_64::getEdgeKindName)),
        block(&graph->createContentBlock(graph->createSection(".text", llvm::orc::MemProt::Read),
                                         llvm::ArrayRef<char>(content, kBlockBytes),
                                         llvm::orc::ExecutorAddr(0x1000), 16, 0)),
        target(&graph->addExternalSymbol("callee", 0, false)) {}

  /// CheckLinkGraphBounds's verdict: "" when it accepts the graph.
  std::string Check() {
    std::string message;
    llvm::handleAllErrors(CheckLinkGraphBounds(*graph),
                          [&](const llvm::ErrorInfoBase& error) { message = error.message(); });
    return message;
  }

  char content[kBlockBytes] = {};
  std::unique_ptr<jitlink::LinkGraph> graph;
  jitlink::Block* block;
  jitlink::Symbol* target;
};

std::string CheckOneEdge(jitlink::Edge::Kind kind, jitlink::Edge::OffsetT offset) {
  Graph graph;
  graph.block->addEdge(kind, offset, *graph.target, 0);
  return graph.Check();
}

TEST(LinkGraphChecksTest, EachRelocationKindFitsExactlyAtTheEndOfItsBlock) {
  struct Case {
    jitlink::Edge::Kind kind;
    unsigned size;
  };
  for (const Case& c :
       {Case{x86_64::Pointer64, 8}, Case{x86_64::Delta64, 8}, Case{x86_64::Size64, 8},
        Case{x86_64::Pointer32, 4}, Case{x86_64::PCRel32, 4}, Case{x86_64::BranchPCRel32, 4},
        Case{x86_64::Delta32, 4}, Case{x86_64::Pointer16, 2}, Case{x86_64::Delta16, 2},
        Case{x86_64::Pointer8, 1}, Case{x86_64::Delta8, 1}}) {
    SCOPED_TRACE(x86_64::getEdgeKindName(c.kind));
    EXPECT_EQ(CheckOneEdge(c.kind, kBlockBytes - c.size), "");
    const std::string refused = CheckOneEdge(c.kind, kBlockBytes - c.size + 1);
    EXPECT_THAT(refused, HasSubstr("malformed object test-object: in section .text"));
    EXPECT_THAT(refused, HasSubstr("outside it"));
  }
}

TEST(LinkGraphChecksTest, AnOffsetFarPastTheBlockIsRefusedWithoutWrappingAround) {
  for (jitlink::Edge::OffsetT offset : {0x3fff6cu, 0xfffffff0u, 0xffffffffu}) {
    EXPECT_THAT(CheckOneEdge(x86_64::Pointer64, offset),
                HasSubstr("Pointer64 relocation at offset " + std::to_string(offset)));
  }
}

TEST(LinkGraphChecksTest, RelaxableGOTLoadsNeedTheirInstructionBytesInTheBlock) {
  EXPECT_EQ(CheckOneEdge(x86_64::PCRel32GOTLoadRelaxable, 2), "");
  EXPECT_THAT(CheckOneEdge(x86_64::PCRel32GOTLoadRelaxable, 1), HasSubstr("[-1, 5)"));
  EXPECT_EQ(CheckOneEdge(x86_64::RequestGOTAndTransformToPCRel32GOTLoadREXRelaxable, 3), "");
  EXPECT_THAT(CheckOneEdge(x86_64::PCRel32GOTLoadREXRelaxable, 2), HasSubstr("[-1, 6)"));
  EXPECT_THAT(CheckOneEdge(x86_64::PCRel32TLVPLoadREXRelaxable, 0), HasSubstr("[-3, 4)"));
}

TEST(LinkGraphChecksTest, KeepAliveEdgesAreNotFixups) {
  EXPECT_EQ(CheckOneEdge(jitlink::Edge::KeepAlive, 1u << 30), "");
}

TEST(LinkGraphChecksTest, ARelocationKindItCannotBoundIsRefused) {
  EXPECT_THAT(CheckOneEdge(x86_64::FirstPlatformRelocation, 0),
              HasSubstr("relocation of unsupported kind"));
}

TEST(LinkGraphChecksTest, DefinedSymbolsLieInsideTheirBlock) {
  {
    Graph graph;
    graph.graph->addDefinedSymbol(*graph.block, 0, "whole", kBlockBytes, jitlink::Linkage::Strong,
                                  jitlink::Scope::Default, true, false);
    graph.graph->addDefinedSymbol(*graph.block, kBlockBytes, "end", 0, jitlink::Linkage::Strong,
                                  jitlink::Scope::Default, false, false);
    EXPECT_EQ(graph.Check(), "");
  }
  // (A symbol past its block cannot be made directly, JITLink asserts; the block shrinks
  // under it instead, as a forged section size would.)
  {
    Graph graph;
    graph.graph->addDefinedSymbol(*graph.block, 8, "entry", 8, jitlink::Linkage::Strong,
                                  jitlink::Scope::Default, true, false);
    graph.block->setContent(llvm::ArrayRef<char>(graph.content, 15));
    EXPECT_THAT(graph.Check(), HasSubstr("symbol entry at offset 8 of 8 bytes runs outside it"));
  }
  {
    Graph graph;
    graph.graph->addDefinedSymbol(*graph.block, kBlockBytes, "past", 0, jitlink::Linkage::Strong,
                                  jitlink::Scope::Default, true, false);
    graph.block->setContent(llvm::ArrayRef<char>(graph.content, 4));
    EXPECT_THAT(graph.Check(), HasSubstr("symbol past at offset 16 of 0 bytes"));
  }
}

TEST(LinkGraphChecksTest, ABlockWithNoContentsTakesNoRelocations) {
  // (JITLink asserts on an edge added to a zero-fill block; the block loses its contents
  // after the edge instead, as a section retyped to NOBITS would.)
  Graph graph;
  graph.block->addEdge(x86_64::Pointer64, 0, *graph.target, 0);
  EXPECT_EQ(graph.Check(), "");
  graph.block->setZeroFillSize(kBlockBytes);
  EXPECT_THAT(graph.Check(), HasSubstr("relocations patch a block with no contents"));
}

TEST(LinkGraphChecksTest, SectionsJITLinksPassesParseOrAdoptAreRefused) {
  for (const char* name : {".eh_frame", "$__GOT", "$__STUBS"}) {
    Graph graph;
    graph.graph->createSection(name, llvm::orc::MemProt::Read);
    EXPECT_THAT(graph.Check(), HasSubstr(std::string("host code has no section ") + name));
  }
}

TEST(LinkGraphChecksTest, OnlyX86_64GraphsAreLinked) {
  Graph graph("aarch64-unknown-linux-gnu");
  EXPECT_THAT(graph.Check(), HasSubstr("the host JIT links x86-64 code only"));
}

}  // namespace
}  // namespace tessera::runtime
