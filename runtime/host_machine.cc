#include "runtime/host_machine.h"

#include <utility>

#include "absl/base/call_once.h"
#include "absl/strings/str_cat.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/SubtargetFeature.h"

namespace tessera::runtime {

void InitializeNativeTarget() {
  static absl::once_flag once;
  absl::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

absl::StatusOr<llvm::orc::JITTargetMachineBuilder> HostMachineBuilder(const HostTarget& target) {
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) {
    return absl::InternalError(
        absl::StrCat("cannot target the host CPU: ", llvm::toString(builder.takeError())));
  }
  if (target.id != ThisMachineHostTarget().id) {
    builder->setCPU(target.cpu);
    builder->getFeatures() = llvm::SubtargetFeatures(target.features);
  }
  builder->setRelocationModel(llvm::Reloc::PIC_);
  builder->setCodeModel(llvm::CodeModel::Small);
  return std::move(*builder);
}

}  // namespace tessera::runtime
