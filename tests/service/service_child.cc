// A helper process for the multi-process cache test: compiles the source in argv[2] through a
// CompileService on the disk root argv[1] and prints "compiled <payload-sha256>" or "disk <…>".
#include <fstream>
#include <iostream>
#include <sstream>

#include "service/artifact.h"
#include "cache/cache_key.h"
#include "service/compile_service.h"

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  std::ifstream in(argv[2]);
  std::stringstream source;
  source << in.rdbuf();
  tessera::service::CompileServiceOptions options;
  options.disk_root = argv[1];
  tessera::service::CompileService cache(options);
  tessera::jit::CompileOptions compile;
  compile.target = tessera::jit::Target::kNvptx;  // PTX + cubin: a slow, real compile
  auto result = cache.Compile(source.str(), compile);
  if (!result.ok()) {
    std::cerr << result.status() << "\n";
    return 1;
  }
  std::cout << (result->source == tessera::service::ModuleSource::kCompiled ? "compiled" : "disk")
            << " " << tessera::cache::Sha256Hex(result->module->device_images.at(0).cubin) << "\n";
  return 0;
}
