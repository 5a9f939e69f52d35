// Host code linked through LLVM ORC (LLJIT) with an allowlist-only symbol generator.
#include "runtime/host_executable.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/base/call_once.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "llvm/ExecutionEngine/JITLink/JITLink.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "runtime/host_machine.h"
#include "runtime/host_object_shape.h"
#include "runtime/link_graph_checks.h"
#include "runtime/soft_float.h"

namespace tessera::runtime {
namespace {

// C library functions the host lowering can emit: allocation and memory intrinsics, libm
// (LLVM intrinsics and math-to-libm calls, f32 and f64), and the soft-float conversion helpers
// LLVM calls for f16/bf16 on CPUs without native support.
const absl::flat_hash_set<absl::string_view>& AllowedSymbols() {
  static const auto* symbols = new absl::flat_hash_set<absl::string_view>{
      "malloc", "calloc", "free", "aligned_alloc", "posix_memalign", "memcpy", "memmove", "memset",
      // libm, f32
      "expf", "exp2f", "expm1f", "logf", "log2f", "log10f", "log1pf", "powf", "sqrtf", "cbrtf",
      "sinf", "cosf", "tanf", "asinf", "acosf", "atanf", "atan2f", "sinhf", "coshf", "tanhf",
      "asinhf", "acoshf", "atanhf", "erff", "erfcf", "fabsf", "floorf", "ceilf", "roundf",
      "roundevenf", "truncf", "rintf", "nearbyintf", "fmaf", "fmodf", "copysignf", "fminf", "fmaxf",
      "sincosf", "ldexpf", "frexpf",
      // libm, f64
      "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "sqrt", "cbrt", "sin", "cos",
      "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
      "erf", "erfc", "fabs", "floor", "ceil", "round", "roundeven", "trunc", "rint", "nearbyint",
      "fma", "fmod", "copysign", "fmin", "fmax", "sincos", "ldexp", "frexp",
      // soft-float helpers (libgcc / compiler-rt)
      "__extendhfsf2", "__truncsfhf2", "__truncdfhf2", "__extendbfsf2", "__truncsfbf2",
      "__truncdfbf2", "__gnu_h2f_ieee", "__gnu_f2h_ieee", "__powisf2", "__powidf2"};
  return *symbols;
}

/// Resolves allowlisted names against the process and leaves every other name unresolved, so
/// ORC reports it as missing. (LLJIT's default would expose every symbol of the process.)
class AllowlistGenerator : public llvm::orc::DefinitionGenerator {
 public:
  llvm::Error tryToGenerate(llvm::orc::LookupState&, llvm::orc::LookupKind,
                            llvm::orc::JITDylib& dylib, llvm::orc::JITDylibLookupFlags,
                            const llvm::orc::SymbolLookupSet& symbols) override {
    llvm::orc::SymbolMap found;
    for (const auto& [name, flags] : symbols) {
      llvm::StringRef text = *name;
      if (!IsAllowedHostSymbol(absl::string_view(text.data(), text.size()))) continue;
      // bf16 helpers are Tessera's own (libgcc before 13 has none); the rest the process's.
      void* address = SoftFloatHelper(absl::string_view(text.data(), text.size()));
      if (address == nullptr) address = dlsym(RTLD_DEFAULT, text.str().c_str());
      if (address == nullptr) continue;
      found[name] = {llvm::orc::ExecutorAddr::fromPtr(address), llvm::JITSymbolFlags::Exported};
    }
    if (found.empty()) return llvm::Error::success();
    return dylib.define(llvm::orc::absoluteSymbols(std::move(found)));
  }
};

std::string ToString(llvm::Error error) { return llvm::toString(std::move(error)); }

/// The shared session's object layer (set with it): Load hands it link graphs it checked.
llvm::orc::ObjectLinkingLayer* object_linking_layer = nullptr;

/// The process's one ORC session for host code, made on first use and kept for the life of
/// the process. Thread-safe.
absl::StatusOr<llvm::orc::LLJIT*> SharedJit() {
  static absl::once_flag once;
  static llvm::orc::LLJIT* jit = nullptr;
  static absl::Status* status = new absl::Status();
  absl::call_once(once, [] {
    InitializeNativeTarget();
    absl::StatusOr<llvm::orc::JITTargetMachineBuilder> builder = HostMachineBuilder();
    if (!builder.ok()) {
      *status = builder.status();
      return;
    }
    auto created = llvm::orc::LLJITBuilder()
                       .setJITTargetMachineBuilder(std::move(*builder))
                       .setLinkProcessSymbolsByDefault(false)
                       .setObjectLinkingLayerCreator(
                           [](llvm::orc::ExecutionSession& session)
                               -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
                             auto layer = std::make_unique<llvm::orc::ObjectLinkingLayer>(session);
                             object_linking_layer = layer.get();
                             return layer;
                           })
                       // No static initializers to run, so no native platform (which would
                       // also require a JITDylib exposing the whole process).
                       .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
                       .create();
    if (!created) {
      *status = absl::InternalError(
          absl::StrCat("cannot create the ORC JIT: ", ToString(created.takeError())));
      return;
    }
    jit = created->release();
    // What ORC would print to stderr; Load checks an object's needs before linking it, and a
    // failed lookup carries its own error.
    jit->getExecutionSession().setErrorReporter(
        [](llvm::Error error) { llvm::consumeError(std::move(error)); });
  });
  if (!status->ok()) return *status;
  return jit;
}

}  // namespace

bool IsAllowedHostSymbol(absl::string_view name) { return AllowedSymbols().contains(name); }

HostExecutable::HostExecutable(llvm::orc::JITDylib* dylib, std::vector<std::string> initializers,
                               std::vector<std::string> finalizers)
    : dylib_(dylib), initializers_(std::move(initializers)), finalizers_(std::move(finalizers)) {}

HostExecutable::~HostExecutable() {
  if (ran_initializers_) RunAll(finalizers_);
  // Frees the linked code and its symbols (a session exists: this executable was made in it).
  llvm::orc::ExecutionSession& session = (*SharedJit())->getExecutionSession();
  llvm::consumeError(session.removeJITDylib(*dylib_));
  // One session for the life of the process: drop the names only this module used.
  session.getSymbolStringPool()->clearDeadEntries();
}

void HostExecutable::RunInitializers() {
  absl::call_once(initialized_, [this] {
    RunAll(initializers_);
    ran_initializers_ = true;
  });
}

void HostExecutable::RunAll(const std::vector<std::string>& functions) const {
  for (const std::string& name : functions) {
    auto symbol = (*SharedJit())->lookup(*dylib_, name);
    if (!symbol) {
      llvm::consumeError(symbol.takeError());  // resolved at Load; cannot fail here
      continue;
    }
    symbol->toPtr<void (*)()>()();
  }
}

absl::Status CheckHostObject(const HostObject& object, const RuntimeSymbolList& runtime) {
  auto file = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(
      llvm::StringRef(object.object.data(), object.object.size()), "host-code"));
  if (!file) {
    return absl::InvalidArgumentError(
        absl::StrCat("the host code is not an object file: ", ToString(file.takeError())));
  }
  TESSERA_RETURN_IF_ERROR(CheckHostObjectShape(object.object));
  absl::flat_hash_set<std::string> provided;
  for (const auto& [name, address] : runtime) provided.insert(name);
  std::vector<std::string> forbidden;
  for (const llvm::object::SymbolRef& symbol : (*file)->symbols()) {
    auto flags = symbol.getFlags();
    auto name = symbol.getName();
    // A symbol that cannot be read refuses the object: a symbol table whose size runs past the
    // end of the file would otherwise yield billions of unreadable entries, one by one.
    if (!flags || !name) {
      std::string why = flags ? "" : ToString(flags.takeError());
      if (!name) {
        std::string name_error = ToString(name.takeError());
        if (why.empty()) why = std::move(name_error);
      }
      return absl::InvalidArgumentError(
          absl::StrCat("the host code's symbol table is malformed: ", why));
    }
    // (JITLink defines the GOT symbol itself.)
    if (!(*flags & llvm::object::SymbolRef::SF_Undefined) || name->empty() ||
        *name == "_GLOBAL_OFFSET_TABLE_") {
      continue;
    }
    const std::string text = name->str();
    if (!IsAllowedHostSymbol(text) && !provided.contains(text)) forbidden.push_back(text);
  }
  if (forbidden.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("the host code references symbols outside the runtime allowlist (allocation, "
                   "memcpy/memset, libm) and the registered libraries: ",
                   absl::StrJoin(forbidden, ", ")));
}

absl::StatusOr<std::unique_ptr<HostExecutable>> HostExecutable::Load(
    const HostObject& object, const std::vector<std::string>& entries,
    const RuntimeSymbolList& runtime) {
  InitializeNativeTarget();
  TESSERA_RETURN_IF_ERROR(CheckHostCodeRunsHere(object.cpu));
  TESSERA_RETURN_IF_ERROR(CheckHostObject(object, runtime));
  TESSERA_ASSIGN_OR_RETURN(llvm::orc::LLJIT * jit, SharedJit());
  static std::atomic<uint64_t> next_dylib{0};
  auto dylib = jit->createJITDylib(
      absl::StrCat("tessera_host_", next_dylib.fetch_add(1, std::memory_order_relaxed)));
  if (!dylib) {
    return absl::InternalError(
        absl::StrCat("cannot create a JITDylib: ", ToString(dylib.takeError())));
  }
  // Owned by `executable` from here on: it removes the dylib when destroyed.
  std::unique_ptr<HostExecutable> executable(
      new HostExecutable(&*dylib, object.initializers, object.finalizers));
  dylib->addGenerator(std::make_unique<AllowlistGenerator>());
  if (!runtime.empty()) {
    llvm::orc::SymbolMap symbols;
    for (const auto& [name, address] : runtime) {
      symbols[jit->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                             llvm::JITSymbolFlags::Exported};
    }
    if (llvm::Error error = dylib->define(llvm::orc::absoluteSymbols(std::move(symbols)))) {
      return absl::InternalError(
          absl::StrCat("cannot define the runtime symbols: ", ToString(std::move(error))));
    }
  }
  // Link every entry and structor now (what a link can still report, ORC's session reporter
  // drops: the object's needs were checked against the boundary above). An object with none
  // has nothing that could ever be called, and is not linked.
  std::vector<std::string> symbols;
  for (const std::string& entry : entries)
    symbols.push_back(absl::StrCat(kPackedEntryPrefix, entry));
  for (const std::string& name : executable->initializers_) symbols.push_back(name);
  for (const std::string& name : executable->finalizers_) symbols.push_back(name);
  if (symbols.empty()) return executable;
  // The link graph is built here rather than by the layer, so that its bounds are checked
  // before JITLink writes a fixup where the object says (a damaged or forged package). Its
  // blocks point into `object`: the lookups below link the whole graph before Load returns.
  auto graph = llvm::jitlink::createLinkGraphFromObject(
      llvm::MemoryBufferRef(llvm::StringRef(object.object.data(), object.object.size()),
                            "host-code"),
      jit->getExecutionSession().getSymbolStringPool());
  if (!graph) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read the host code: ", ToString(graph.takeError())));
  }
  if (llvm::Error error = CheckLinkGraphBounds(**graph)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot link the host code: ", ToString(std::move(error))));
  }
  if (llvm::Error error = object_linking_layer->add(*dylib, std::move(*graph))) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot link the host code: ", ToString(std::move(error))));
  }
  for (const std::string& symbol_name : symbols) {
    auto symbol = jit->lookup(*dylib, symbol_name);
    if (!symbol) {
      std::string lookup_error = ToString(symbol.takeError());
      std::string what = absl::StartsWith(symbol_name, kPackedEntryPrefix)
                             ? absl::StrCat("@", symbol_name.substr(kPackedEntryPrefix.size()))
                             : symbol_name;
      return absl::InvalidArgumentError(
          absl::StrCat("cannot link the host code for ", what, ": ", lookup_error));
    }
  }
  return executable;
}

absl::StatusOr<PackedEntry> HostExecutable::Lookup(absl::string_view name) const {
  auto symbol = (*SharedJit())->lookup(*dylib_, absl::StrCat(kPackedEntryPrefix, name));
  if (!symbol) {
    return absl::NotFoundError(
        absl::StrCat("no host entry point @", name, ": ", ToString(symbol.takeError())));
  }
  return symbol->toPtr<PackedEntry>();
}

}  // namespace tessera::runtime
