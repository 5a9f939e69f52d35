// Finding and loading NVRTC, nvJitLink and libdevice at run time (see the header).
#include "jit/codegen/cuda_libraries.h"

#include <cuda.h>
#include <dlfcn.h>
#include <glob.h>
#include <link.h>
#include <sys/stat.h>

#include <cstdlib>
#include <functional>

#include "absl/base/call_once.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace tessera::jit {
namespace {

constexpr int kCudaMajor = CUDA_VERSION / 1000;

bool IsFile(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

bool IsDirectory(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

std::string Getenv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

/// The directory this library (or executable) was loaded from.
std::string OwnDirectory() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&OwnDirectory), &info) == 0 || info.dli_fname == nullptr) {
    return "";
  }
  char resolved[PATH_MAX];
  if (realpath(info.dli_fname, resolved) == nullptr) return "";
  std::string path = resolved;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

/// `prefix`/lib/python3.*/site-packages/nvidia/cu<major>, for each Python of an environment.
std::vector<std::string> EnvironmentWheelRoots(const std::string& prefix) {
  std::vector<std::string> roots;
  if (prefix.empty()) return roots;
  const std::string pattern =
      absl::StrCat(prefix, "/lib/python3*/site-packages/nvidia/cu", kCudaMajor);
  glob_t found;
  if (glob(pattern.c_str(), GLOB_ONLYDIR, nullptr, &found) == 0) {
    for (size_t i = 0; i < found.gl_pathc; ++i) roots.push_back(found.gl_pathv[i]);
  }
  globfree(&found);
  return roots;
}

/// Searches the roots for `relative_paths` (the first that exists in a root wins), then,
/// when `soname` is not empty, the system loader's path; `load` (when set) must accept the
/// file — a library that does not load or lacks an entry point is a step, not the answer.
CudaComponent Search(const std::string& name, const std::vector<std::string>& relative_paths,
                     const std::string& soname,
                     const std::function<bool(const std::string&, std::string&)>& load) {
  CudaComponent component;
  component.name = name;
  for (const CudaRoot& root : CudaSearchRoots()) {
    bool present = false;
    for (const std::string& relative : relative_paths) {
      const std::string path = absl::StrCat(root.path, "/", relative);
      if (!IsFile(path)) continue;
      present = true;
      std::string problem;
      if (load && !load(path, problem)) {
        component.steps.push_back(absl::StrCat(root.origin, " ", path, ": ", problem));
        continue;
      }
      component.steps.push_back(absl::StrCat(root.origin, " ", path, ": found"));
      component.path = path;
      component.root = root.path;
      component.origin = root.origin;
      return component;
    }
    if (!present) {
      component.steps.push_back(absl::StrCat(root.origin, " ", root.path, ": no ",
                                             absl::StrJoin(relative_paths, " or ")));
    }
  }
  if (!soname.empty() && load) {
    std::string problem;
    if (load(soname, problem)) {
      // Which file the loader chose (its link map names it).
      std::string path = soname;
      if (void* handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) {
        struct link_map* map = nullptr;
        if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr &&
            map->l_name != nullptr && *map->l_name != '\0') {
          path = map->l_name;
        }
        dlclose(handle);
      }
      component.steps.push_back(absl::StrCat("system loader path ", soname, ": found ", path));
      component.path = path;
      component.origin = "system loader path";
      return component;
    }
    component.steps.push_back(absl::StrCat("system loader path ", soname, ": ", problem));
  }
  return component;
}

template <typename Fn>
bool Resolve(void* handle, const char* symbol, Fn& out, std::string& problem) {
  out = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (out == nullptr) problem = absl::StrCat("it has no ", symbol);
  return out != nullptr;
}

/// dlopen's view of `path`: the handle, or null with `problem` set.
void* Open(const std::string& path, std::string& problem) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    problem = absl::StrCat("does not load (", error != nullptr ? error : "unknown error", ")");
  }
  return handle;
}

template <typename Api>
struct LoadedLibrary {
  CudaComponent component;
  Api api{};
};

/// Searches for lib<stem>.so.<major> (CudaComponent `name`) and loads the first that
/// `resolve(handle, api, major, minor, problem)` accepts: it fills the entry points and the
/// version the library reports. A library of another CUDA major is a step, not the answer.
template <typename Api>
LoadedLibrary<Api> LoadLibrary(
    const std::string& name, const std::string& stem,
    const std::function<bool(void*, Api&, int&, int&, std::string&)>& resolve) {
  LoadedLibrary<Api> loaded;
  const std::string soname = absl::StrCat("lib", stem, ".so.", kCudaMajor);
  std::string version;
  loaded.component = Search(name, {absl::StrCat("lib64/", soname), absl::StrCat("lib/", soname)},
                            soname, [&](const std::string& path, std::string& problem) {
                              void* handle = Open(path, problem);
                              if (handle == nullptr) return false;
                              Api api{};
                              int major = 0;
                              int minor = 0;
                              bool ok = resolve(handle, api, major, minor, problem);
                              if (ok && major != kCudaMajor) {
                                ok = false;
                                problem = absl::StrCat("it is ", name, " ", major, ".", minor,
                                                       ", not ", kCudaMajor, ".x");
                              }
                              if (!ok) {
                                dlclose(handle);
                                return false;
                              }
                              loaded.api = api;
                              version = absl::StrCat(major, ".", minor);
                              return true;
                            });
  loaded.component.version = version;
  return loaded;
}

const LoadedLibrary<NvrtcApi>& Nvrtc() {
  static const auto* loaded = new LoadedLibrary<NvrtcApi>(LoadLibrary<NvrtcApi>(
      "NVRTC", "nvrtc",
      [](void* handle, NvrtcApi& api, int& major, int& minor, std::string& problem) {
        bool ok = true;
#define TESSERA_RESOLVE(fn) ok = ok && Resolve(handle, #fn, api.fn, problem)
        TESSERA_RESOLVE(nvrtcVersion);
        TESSERA_RESOLVE(nvrtcGetErrorString);
        TESSERA_RESOLVE(nvrtcCreateProgram);
        TESSERA_RESOLVE(nvrtcCompileProgram);
        TESSERA_RESOLVE(nvrtcDestroyProgram);
        TESSERA_RESOLVE(nvrtcGetProgramLogSize);
        TESSERA_RESOLVE(nvrtcGetProgramLog);
        TESSERA_RESOLVE(nvrtcGetPTXSize);
        TESSERA_RESOLVE(nvrtcGetPTX);
        TESSERA_RESOLVE(nvrtcGetCUBINSize);
        TESSERA_RESOLVE(nvrtcGetCUBIN);
#undef TESSERA_RESOLVE
        if (ok && api.nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) {
          ok = false;
          problem = "nvrtcVersion failed";
        }
        return ok;
      }));
  return *loaded;
}

const LoadedLibrary<NvJitLinkApi>& NvJitLink() {
  static const auto* loaded = new LoadedLibrary<NvJitLinkApi>(LoadLibrary<NvJitLinkApi>(
      "nvJitLink", "nvJitLink",
      [](void* handle, NvJitLinkApi& api, int& major, int& minor, std::string& problem) {
        bool ok = Resolve(handle, "nvJitLinkVersion", api.nvJitLinkVersion, problem);
#define TESSERA_RESOLVE(fn) ok = ok && Resolve(handle, "__" #fn "_13_0", api.fn, problem)
        TESSERA_RESOLVE(nvJitLinkCreate);
        TESSERA_RESOLVE(nvJitLinkDestroy);
        TESSERA_RESOLVE(nvJitLinkAddData);
        TESSERA_RESOLVE(nvJitLinkComplete);
        TESSERA_RESOLVE(nvJitLinkGetLinkedCubinSize);
        TESSERA_RESOLVE(nvJitLinkGetLinkedCubin);
        TESSERA_RESOLVE(nvJitLinkGetErrorLogSize);
        TESSERA_RESOLVE(nvJitLinkGetErrorLog);
#undef TESSERA_RESOLVE
        unsigned reported_major = 0;
        unsigned reported_minor = 0;
        if (ok && api.nvJitLinkVersion(&reported_major, &reported_minor) != NVJITLINK_SUCCESS) {
          ok = false;
          problem = "nvJitLinkVersion failed";
        }
        major = static_cast<int>(reported_major);
        minor = static_cast<int>(reported_minor);
        return ok;
      }));
  return *loaded;
}

llvm::json::Object ComponentJson(const CudaComponent& component) {
  llvm::json::Array steps;
  for (const std::string& step : component.steps) steps.push_back(step);
  llvm::json::Object object{{"found", component.found()}, {"steps", std::move(steps)}};
  if (component.found()) {
    object["path"] = component.path;
    object["origin"] = component.origin;
    if (!component.version.empty()) object["version"] = component.version;
  }
  return object;
}

}  // namespace

std::vector<CudaRoot> CudaSearchRoots() {
  std::vector<CudaRoot> roots;
  auto add = [&](const std::string& origin, const std::string& path) {
    if (path.empty()) return;
    for (const CudaRoot& root : roots) {
      if (root.path == path) return;
    }
    roots.push_back({origin, path});
  };
  add("$TESSERA_JIT_CUDA_HOME", Getenv("TESSERA_JIT_CUDA_HOME"));
  // A wheel puts this library in site-packages/tessera_jit/ and NVIDIA's beside it.
  const std::string wheel = absl::StrCat("nvidia/cu", kCudaMajor);
  if (const std::string own = OwnDirectory(); !own.empty()) {
    for (const std::string& candidate :
         {absl::StrCat(own, "/../", wheel), absl::StrCat(own, "/../../", wheel)}) {
      char resolved[PATH_MAX];
      if (IsDirectory(candidate) && realpath(candidate.c_str(), resolved) != nullptr) {
        add("NVIDIA wheel", resolved);
      }
    }
  }
  for (const char* prefix : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    for (const std::string& root : EnvironmentWheelRoots(Getenv(prefix))) {
      add("NVIDIA wheel", root);
    }
  }
  add("$CUDA_HOME", Getenv("CUDA_HOME"));
  add("$CUDA_PATH", Getenv("CUDA_PATH"));
  add("toolkit", "/usr/local/cuda");
  return roots;
}

absl::Status CudaComponent::Missing(absl::string_view what) const {
  return absl::FailedPreconditionError(absl::StrCat(
      what, " needs ", name, ", which was not found; looked in: ", absl::StrJoin(steps, "; "),
      " (install NVIDIA's wheels with `pip install tessera-jit[cuda]`, or set "
      "TESSERA_JIT_CUDA_HOME to a CUDA ",
      kCudaMajor, " toolkit)"));
}

const CudaComponent& NvrtcComponent() { return Nvrtc().component; }
const CudaComponent& NvJitLinkComponent() { return NvJitLink().component; }

const CudaComponent& LibdeviceComponent() {
  static absl::once_flag once;
  static CudaComponent* component = new CudaComponent();
  absl::call_once(once, [] {
    *component = Search("libdevice", {"nvvm/libdevice/libdevice.10.bc"}, "", nullptr);
  });
  return *component;
}

absl::StatusOr<const NvrtcApi*> LoadNvrtc(absl::string_view what) {
  const auto& loaded = Nvrtc();
  if (!loaded.component.found()) return loaded.component.Missing(what);
  return &loaded.api;
}

absl::StatusOr<const NvJitLinkApi*> LoadNvJitLink(absl::string_view what) {
  const auto& loaded = NvJitLink();
  if (!loaded.component.found()) return loaded.component.Missing(what);
  return &loaded.api;
}

std::string CudaComponentsJson() {
  llvm::json::Object object{{"nvrtc", ComponentJson(NvrtcComponent())},
                            {"nvjitlink", ComponentJson(NvJitLinkComponent())},
                            {"libdevice", ComponentJson(LibdeviceComponent())}};
  std::string text;
  llvm::raw_string_ostream stream(text);
  stream << llvm::json::Value(std::move(object));
  return text;
}

}  // namespace tessera::jit
