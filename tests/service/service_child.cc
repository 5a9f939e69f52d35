// A helper process for the multi-process cache tests ("machines" of a fleet when each gets its
// own disk root). Usage:
//   service_child [--remote URL] ROOT SOURCE...   compiles each SOURCE for nvptx through a
//       CompileService on disk root ROOT; prints "<compiled|disk|remote|memory> <cubin sha256>"
//       per source, then "remote waits=N takeovers=N timeouts=N".
//   service_child --remote URL --hold-lease ROOT SOURCE   takes SOURCE's remote lease, prints
//       "held", and sleeps until killed (a lease holder that dies).
//   service_child --remote URL --decide ROOT SOURCE   compiles SOURCE for the host with the
//       arbiter (OpenBLAS registered) and prints "decision <source> <winner>" per record and
//       "decisions stores=N remote_hits=N".
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cache/cache_key.h"
#include "jit/delegates/registry.h"
#include "service/artifact.h"
#include "service/compile_service.h"

namespace {

std::string Read(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const char* Name(tessera::service::ModuleSource source) {
  switch (source) {
    case tessera::service::ModuleSource::kCompiled:
      return "compiled";
    case tessera::service::ModuleSource::kDisk:
      return "disk";
    case tessera::service::ModuleSource::kRemote:
      return "remote";
    case tessera::service::ModuleSource::kMemory:
      return "memory";
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  int arg = 1;
  std::string remote;
  std::string mode;
  while (arg < argc && std::strncmp(argv[arg], "--", 2) == 0) {
    const std::string flag = argv[arg++];
    if (flag == "--remote" && arg < argc) {
      remote = argv[arg++];
    } else if (flag == "--hold-lease" || flag == "--decide") {
      mode = flag;
    } else {
      return 2;
    }
  }
  if (argc - arg < 2) return 2;
  tessera::service::CompileServiceOptions options;
  options.disk_root = argv[arg++];
  options.remote_url = remote;
  tessera::service::CompileService service(options);
  tessera::jit::CompileOptions compile;
  compile.target = tessera::runtime::Target::kNvptx;  // PTX + cubin: a slow, real compile
  if (mode == "--hold-lease") {
    auto explanation = service.Explain(Read(argv[arg]), compile);
    if (!explanation.ok() || service.remote() == nullptr) return 1;
    auto claim =
        service.remote()->LoadOrLease(explanation->key, tessera::service::kArtifactFormatVersion);
    if (claim.lease == nullptr) return 1;
    std::cout << "held" << std::endl;
    while (true) pause();
  }
  if (mode == "--decide") {
    compile.target = tessera::runtime::Target::kHost;
    auto registry = std::make_shared<tessera::jit::delegates::DelegateRegistry>();
    if (!registry->RegisterDefaultLibraries(tessera::runtime::Target::kHost).ok()) return 1;
    compile.delegates = registry;
    auto decisions = service.MakeDecisionCache();
    compile.decisions = decisions;
    auto result = service.Compile(Read(argv[arg]), compile);
    if (!result.ok()) {
      std::cerr << result.status() << "\n";
      return 1;
    }
    for (const auto& record : result->module->decisions) {
      std::cout << "decision " << record.source << " " << record.winner << "\n";
    }
    const auto stats = decisions->stats();
    std::cout << "decisions stores=" << stats.stores << " remote_hits=" << stats.remote_hits
              << "\n";
    return 0;
  }
  for (; arg < argc; ++arg) {
    auto result = service.Compile(Read(argv[arg]), compile);
    if (!result.ok()) {
      std::cerr << result.status() << "\n";
      return 1;
    }
    std::cout << Name(result->source) << " "
              << tessera::cache::Sha256Hex(result->module->device_images.at(0).cubin) << std::endl;
  }
  const auto stats = service.stats();
  std::cout << "remote waits=" << stats.remote.lease_waits
            << " takeovers=" << stats.remote.lease_takeovers
            << " timeouts=" << stats.remote.lease_timeouts << std::endl;
  return 0;
}
