// The delegate registry: dlopen'ed libraries with identities, kernel images, NVRTC.
#include "jit/delegates/registry.h"

#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/files.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "jit/codegen/cuda_libraries.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"

// After LLVM: <elf.h> defines macros (EI_MAG0, …) that collide with llvm/BinaryFormat/ELF.h.
#include <elf.h>
#include <link.h>

namespace tessera::jit::delegates {
namespace {

/// The DT_SONAME of a loaded library, read from its dynamic section in memory.
std::string Soname(void* handle) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_ld == nullptr) {
    return "";
  }
  const char* strtab = nullptr;
  ElfW(Xword) soname = 0;
  bool has_soname = false;
  for (const ElfW(Dyn)* dyn = map->l_ld; dyn->d_tag != DT_NULL; ++dyn) {
    if (dyn->d_tag == DT_STRTAB) strtab = reinterpret_cast<const char*>(dyn->d_un.d_ptr);
    if (dyn->d_tag == DT_SONAME) {
      soname = dyn->d_un.d_val;
      has_soname = true;
    }
  }
  return strtab != nullptr && has_soname ? std::string(strtab + soname) : "";
}

std::string LoadedPath(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  std::string path = fallback;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      *map->l_name != '\0') {
    path = map->l_name;
  }
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) != nullptr) return resolved;
  return path;
}

/// What the library says it is, through the query functions known vendors export; else the
/// version suffix of the file actually loaded.
std::string ReportedVersion(void* handle, const std::string& path) {
  using ConfigFn = const char* (*)();
  if (auto config = reinterpret_cast<ConfigFn>(dlsym(handle, "openblas_get_config"))) {
    std::string text = config();
    // "OpenBLAS 0.3.21 NO_AFFINITY …": keep the first two words.
    size_t second = text.find(' ', text.find(' ') + 1);
    return text.substr(0, second);
  }
  using PropertyFn = int (*)(int, int*);
  if (auto property = reinterpret_cast<PropertyFn>(dlsym(handle, "cublasGetProperty"))) {
    int major = 0, minor = 0, patch = 0;
    if (property(0, &major) == 0 && property(1, &minor) == 0 && property(2, &patch) == 0) {
      return absl::StrCat("cuBLAS ", major, ".", minor, ".", patch);
    }
  }
  size_t so = path.find(".so.");
  return so == std::string::npos ? "unknown" : path.substr(so + 4);
}

/// Function symbols of a cubin (an ELF file).
absl::StatusOr<std::vector<std::string>> CubinEntries(const std::string& cubin) {
  auto object = llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(llvm::StringRef(cubin.data(), cubin.size()), "cubin"));
  if (!object) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a cubin (ELF) image: ", llvm::toString(object.takeError())));
  }
  std::vector<std::string> entries;
  for (const llvm::object::SymbolRef& symbol : (*object)->symbols()) {
    auto type = symbol.getType();
    auto name = symbol.getName();
    if (!type || !name) {
      llvm::consumeError(type.takeError());
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*type == llvm::object::SymbolRef::ST_Function) entries.push_back(name->str());
  }
  return entries;
}

}  // namespace

PointerSpace PointerSpaceFor(Target target) {
  return target == Target::kHost ? PointerSpace::kHost : PointerSpace::kDevice;
}

PointerSpace InferPointerSpace(absl::string_view soname) {
  for (absl::string_view prefix : {"libcublas", "libcudnn", "libcufft", "libcurand", "libcusparse",
                                   "libcusolver", "libnccl", "libcudart", "libnvshmem"}) {
    if (absl::StartsWith(soname, prefix)) return PointerSpace::kDevice;
  }
  return PointerSpace::kHost;
}

std::vector<std::string> PtxEntries(absl::string_view ptx) {
  std::vector<std::string> entries;
  constexpr absl::string_view kEntry = ".entry ";
  for (size_t at = ptx.find(kEntry); at != absl::string_view::npos;
       at = ptx.find(kEntry, at + kEntry.size())) {
    size_t begin = at + kEntry.size();
    size_t end = ptx.find_first_of("( \n", begin);
    entries.emplace_back(ptx.substr(begin, end - begin));
  }
  return entries;
}

DelegateRegistry::~DelegateRegistry() {
  runtime_->Release();  // cuBLAS handles need the library that is closed below
  absl::MutexLock lock(&mu_);
  for (auto& [name, library] : libraries_) dlclose(library.handle);
}

absl::Status DelegateRegistry::RegisterLibrary(const std::string& name, const std::string& path,
                                               PointerSpace pointers) {
  if (name.empty()) return absl::InvalidArgumentError("a library needs a non-empty name");
  {
    absl::MutexLock lock(&mu_);
    if (libraries_.count(name) || images_.count(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("a delegate named '", name, "' is already registered"));
    }
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::InvalidArgumentError(absl::StrCat("cannot load library '", name, "' from ", path,
                                                   ": ", error != nullptr ? error : "?"));
  }
  Library library;
  library.handle = handle;
  DelegateIdentity& id = library.identity;
  id.name = name;
  id.kind = "library";
  id.path = LoadedPath(handle, path);
  id.soname = Soname(handle);
  if (id.soname.empty()) id.soname = id.path.substr(id.path.rfind('/') + 1);  // no DT_SONAME
  id.version = ReportedVersion(handle, id.path);
  id.pointers = pointers == PointerSpace::kInferred ? InferPointerSpace(id.soname) : pointers;
  std::string bytes;
  if (!ReadFile(id.path, bytes)) {
    dlclose(handle);
    return absl::InvalidArgumentError(absl::StrCat("cannot read ", id.path, " to hash it"));
  }
  id.sha256 = Sha256Hex(bytes);
  // cuBLAS: the runtime binds a handle to the caller's stream around every call.
  if (void* create = dlsym(handle, "cublasCreate_v2")) {
    runtime_->SetCublasEntryPoints(create, dlsym(handle, "cublasSetStream_v2"),
                                   dlsym(handle, "cublasDestroy_v2"));
  }
  absl::MutexLock lock(&mu_);
  libraries_[name] = std::move(library);
  return absl::OkStatus();
}

absl::Status DelegateRegistry::RegisterDefaultLibraries(Target target) {
  if (target == Target::kHost) return RegisterLibrary("openblas", "libopenblas.so.0");
  return RegisterLibrary("cublas", "libcublas.so.13");
}

absl::Status DelegateRegistry::AddImage(KernelImage image) {
  if (image.name.empty()) return absl::InvalidArgumentError("an image needs a non-empty name");
  if (image.entries.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel image '", image.name, "' has no kernel entries"));
  }
  image.identity.name = image.name;
  image.identity.kind = "kernel_image";
  image.identity.version = image.cubin.empty() ? "ptx" : "cubin";
  image.identity.sha256 = Sha256Hex(image.cubin.empty() ? image.ptx : image.cubin);
  absl::MutexLock lock(&mu_);
  if (libraries_.count(image.name) || images_.count(image.name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("a delegate named '", image.name, "' is already registered"));
  }
  runtime_->AddKernelImage(image.name, image.cubin, image.ptx);
  images_[image.name] = std::move(image);
  return absl::OkStatus();
}

absl::Status DelegateRegistry::RegisterPtx(const std::string& name, std::string ptx) {
  KernelImage image;
  image.name = name;
  image.entries = PtxEntries(ptx);
  image.ptx = std::move(ptx);
  return AddImage(std::move(image));
}

absl::Status DelegateRegistry::RegisterCubin(const std::string& name, std::string cubin) {
  auto entries = CubinEntries(cubin);
  if (!entries.ok()) return entries.status();
  KernelImage image;
  image.name = name;
  image.entries = *entries;
  image.cubin = std::move(cubin);
  return AddImage(std::move(image));
}

absl::Status DelegateRegistry::RegisterCudaSource(const std::string& name,
                                                  const std::string& source,
                                                  const std::string& arch) {
  if (absl::Status status = ValidateArch(arch); !status.ok()) return status;
  const std::string key = Sha256Hex(absl::StrCat(arch, "\n", source));
  std::string ptx;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = nvrtc_cache_.find(key); it != nvrtc_cache_.end()) ptx = it->second;
  }
  if (ptx.empty()) {
    TESSERA_ASSIGN_OR_RETURN(
        const jit::NvrtcApi* nvrtc,
        jit::LoadNvrtc(absl::StrCat("compiling CUDA C++ kernel source '", name, "'")));
    nvrtcProgram program;
    if (nvrtc->nvrtcCreateProgram(&program, source.c_str(), (name + ".cu").c_str(), 0, nullptr,
                                  nullptr) != NVRTC_SUCCESS) {
      return absl::InternalError("nvrtcCreateProgram failed");
    }
    std::string arch_option = absl::StrCat("-arch=compute_", arch.substr(3));
    std::vector<std::string> option_text = {arch_option, "-default-device"};
    // The CUDA headers of the root NVRTC came from, when it has them (a toolkit does; NVIDIA's
    // NVRTC wheel has nvrtc.h only, and NVRTC's built-in headers serve device code).
    if (const std::string& root = jit::NvrtcComponent().root;
        !root.empty() && std::filesystem::exists(root + "/include/cuda.h")) {
      option_text.push_back("-I" + root + "/include");
    }
    std::vector<const char*> options;
    for (const std::string& option : option_text) options.push_back(option.c_str());
    nvrtcResult result =
        nvrtc->nvrtcCompileProgram(program, static_cast<int>(options.size()), options.data());
    size_t log_size = 0;
    nvrtc->nvrtcGetProgramLogSize(program, &log_size);
    std::string log(log_size, '\0');
    nvrtc->nvrtcGetProgramLog(program, log.data());
    if (result != NVRTC_SUCCESS) {
      nvrtc->nvrtcDestroyProgram(&program);
      return absl::InvalidArgumentError(absl::StrCat("NVRTC could not compile kernel source '",
                                                     name, "' for ", arch, ":\n", log));
    }
    size_t size = 0;
    nvrtc->nvrtcGetPTXSize(program, &size);
    ptx.resize(size);
    nvrtc->nvrtcGetPTX(program, ptx.data());
    nvrtc->nvrtcDestroyProgram(&program);
    if (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
    absl::MutexLock lock(&mu_);
    nvrtc_cache_[key] = ptx;
  }
  return RegisterPtx(name, std::move(ptx));
}

void* DelegateRegistry::DefinedIn(const Library& library, const std::string& name) {
  // dlsym on the library's own handle, never the global scope of the process.
  // dlsym also searches the library's dependencies (libc has `system`); only a symbol the
  // registered file itself defines counts.
  void* address = dlsym(library.handle, name.c_str());
  Dl_info info;
  if (address != nullptr && dladdr(address, &info) != 0 && info.dli_fname != nullptr) {
    char defining[PATH_MAX];
    if (realpath(info.dli_fname, defining) != nullptr && library.identity.path == defining) {
      return address;
    }
  }
  return nullptr;
}

absl::StatusOr<ResolvedSymbol> DelegateRegistry::ResolveCAbi(absl::string_view callee) const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> searched;
  std::string name(callee);
  for (const auto& [library_name, library] : libraries_) {
    if (void* address = DefinedIn(library, name)) return ResolvedSymbol{address, library.identity};
    searched.push_back(absl::StrCat(library_name, " (", library.identity.path, ")"));
  }
  return absl::NotFoundError(
      absl::StrCat("'", name, "' not found in registered libraries (searched: ",
                   searched.empty() ? "none registered" : absl::StrJoin(searched, ", "), ")"));
}

absl::StatusOr<ResolvedSymbol> DelegateRegistry::ResolveCAbiIn(absl::string_view library_name,
                                                               absl::string_view callee) const {
  absl::MutexLock lock(&mu_);
  auto it = libraries_.find(std::string(library_name));
  if (it == libraries_.end()) {
    return absl::NotFoundError(absl::StrCat("library '", library_name, "' is not registered"));
  }
  if (void* address = DefinedIn(it->second, std::string(callee))) {
    return ResolvedSymbol{address, it->second.identity};
  }
  return absl::NotFoundError(absl::StrCat("'", callee, "' is not defined by library '",
                                          library_name, "' (", it->second.identity.path, ")"));
}

bool DelegateRegistry::HasLibrary(absl::string_view name) const {
  absl::MutexLock lock(&mu_);
  return libraries_.count(std::string(name)) > 0;
}

absl::Status DelegateRegistry::DeclareMatmulProvider(const MatmulProvider& provider) {
  TESSERA_RETURN_IF_ERROR(ValidateMatmulProvider(provider));
  if (BuiltinMatmulProvider(provider.name) != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "matmul provider '", provider.name, "' is built in; declare yours under another name"));
  }
  TESSERA_ASSIGN_OR_RETURN(ResolvedSymbol own, ResolveCAbiIn(provider.library, provider.callee));
  const PointerSpace needed = PointerSpaceFor(provider.target);
  if (own.library.pointers != needed) {
    return absl::InvalidArgumentError(absl::StrCat(
        "matmul provider '", provider.name, "': library '", provider.library, "' takes ",
        PointerSpaceName(own.library.pointers), " pointers, so it cannot serve the ",
        TargetName(provider.target), " target (", PointerSpaceName(needed), " memory)"));
  }
  // kernel_call binds a callee by name across all registered libraries: the name must lead
  // to this library.
  TESSERA_ASSIGN_OR_RETURN(ResolvedSymbol bound, ResolveCAbi(provider.callee));
  if (bound.address != own.address) {
    return absl::InvalidArgumentError(
        absl::StrCat("matmul provider '", provider.name, "': callee '", provider.callee,
                     "' is also defined by library '", bound.library.name,
                     "', which a call by that name would bind; give the callee a unique name"));
  }
  absl::MutexLock lock(&mu_);
  for (const MatmulProvider& declared : providers_) {
    if (declared.name == provider.name) {
      return absl::InvalidArgumentError(
          absl::StrCat("a matmul provider named '", provider.name, "' is already declared"));
    }
  }
  providers_.push_back(provider);
  return absl::OkStatus();
}

std::vector<MatmulProvider> DelegateRegistry::MatmulProviders(Target target) const {
  std::vector<MatmulProvider> providers;
  for (const MatmulProvider& provider : BuiltinMatmulProviders()) {
    if (provider.target == target) providers.push_back(provider);
  }
  absl::MutexLock lock(&mu_);
  for (const MatmulProvider& provider : providers_) {
    if (provider.target == target) providers.push_back(provider);
  }
  return providers;
}

absl::StatusOr<KernelImage> DelegateRegistry::ResolveKernel(absl::string_view callee) const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> searched;
  for (const auto& [name, image] : images_) {
    for (const std::string& entry : image.entries) {
      if (entry == callee) return image;
    }
    searched.push_back(name);
  }
  return absl::NotFoundError(
      absl::StrCat("kernel '", callee, "' not found in registered kernel images (searched: ",
                   searched.empty() ? "none registered" : absl::StrJoin(searched, ", "), ")"));
}

std::vector<DelegateIdentity> DelegateRegistry::Identities() const {
  absl::MutexLock lock(&mu_);
  std::vector<DelegateIdentity> identities;
  for (const auto& [name, library] : libraries_) identities.push_back(library.identity);
  for (const auto& [name, image] : images_) identities.push_back(image.identity);
  return identities;
}

}  // namespace tessera::jit::delegates
