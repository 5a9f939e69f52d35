// tessera-jit: compile and run Tessera IR from the command line.
//
//   tessera-jit compile FILE [--target host|nvptx] [--arch sm_90] [-O N] [--deterministic]
//                            [--emit mlir|llvm|ptx|cubin] [-o OUT]
//   tessera-jit run FILE --entry NAME [--target auto|host|nvptx] [--size N] [--shape I=AxB]
//                        [--scalar I=V] [--runs N] [--seed S]
//   tessera-jit explain FILE [compile options] [--json]
//   tessera-jit repl
//   tessera-jit cache stats|ls|explain FILE|clear [--dir DIR] [--remote]
//   tessera-jit delegates [--library NAME=PATH]... [--kernel NAME=FILE]... [--default-libraries]
//                         [--target T] [--arch A]
//   tessera-jit --help | --version
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "arbiter/decision_cache.h"
#include "arbiter/decision_record.h"
#include "arbiter/plan.h"
#include "base/files.h"
#include "service/background_decisions.h"
#include "service/compile_request.h"
#include "service/compile_service.h"
#include "service/delegates.h"
#include "service/loaded_module.h"
#include "service/package.h"
#include "tools/tessera-jit/cache_command.h"
#include "tools/tessera-jit/flags.h"
#include "tools/tessera-jit/repl.h"
#include "tools/tessera-jit/runner.h"

namespace {

constexpr char kVersion[] = "tessera-jit 0.1.0";

constexpr char kUsage[] = R"(usage:
  tessera-jit compile FILE [options]   compile Tessera IR and print what --emit asks for
  tessera-jit run FILE --entry NAME [options]
                                       run an entry on random inputs: checksum, timing, and
                                       host-vs-device agreement when it runs on the GPU
  tessera-jit explain FILE [options] [--json]
                                       compile (or reuse) and print the arbiter's decision
                                       for every Tile op: candidates, gates, timings, winner
  tessera-jit repl                     an interactive session (:help inside)
  tessera-jit cache stats|ls|explain FILE|clear [--remote]
                                       inspect or clear the compile cache on disk (or, with
                                       --remote, the fleet's tier on Redis)
  tessera-jit delegates [--library NAME=PATH]... [--kernel NAME=FILE]... [--default-libraries]
                        [--target T] [--arch A]
                                       register delegates and print their identities
  tessera-jit --help                   this text
  tessera-jit --version                the version

compile options:
  --target host|nvptx   target (default: host)
  --arch sm_XX          GPU architecture for nvptx (default: sm_90; the list is at the end)
  --host-cpu CPU        host: the CPU machine code is for (default: native, this machine's
                        with every feature it has): a 64-bit x86 CPU LLVM knows (x86-64-v3,
                        skylake-avx512, znver4…), whose code runs wherever its features are;
                        code a CPU here cannot run is compiled, not run, its Tile ops unmeasured
  -O N                  optimisation level 0-3 (default: 2)
  --deterministic       treat every function as tessera.deterministic
  --batch-invariant     … at the batch_invariant level: only candidates whose rows do not
                        depend on the batch size serve a Tile op
  --ptx-only            nvptx: no cubin (no nvJitLink); the driver compiles the PTX when the
                        module loads (implied by --emit ptx)
  --budget-ms N         how long one decision's candidates may run (default 300)
  --plan PLAN           replay a plan file: every Tile op takes its pinned candidate, nothing
                        is measured (a point not in it runs the compiled lowering)
  --plan-strict         with --plan: a Tile op the plan lacks is an error
  --emit KIND           mlir  the IR after every lowering stage
                        llvm  the host code as LLVM IR
                        ptx   the PTX of every device image (nvptx)
                        cubin one cubin with every kernel (nvptx; needs -o)
                        package an ahead-of-time package `run` (and the C API's
                              tessera_jit_module_load) loads with no compiling: one
                              entry per --host-cpu native,x86-64-v3,… (host; default
                              this CPU's) or per --arch sm_90,sm_100,… (nvptx); needs -o
                        (default: nothing; the compile is checked and a summary printed)
  -o OUT                write the output to OUT instead of standard output
  --library NAME=PATH   register a vendor library as delegate NAME (repeatable); CUDA
                        libraries (libcublas…) take device pointers, others host pointers
  --kernel NAME=FILE    register hand-written kernels as image NAME (repeatable): CUDA C++
                        (.cu, compiled with NVRTC for --arch), PTX (.ptx) or a cubin (.cubin)
  --default-libraries   register the target's default set (host: openblas; nvptx: cublas)
  --matmul-delegate P   force every tile.matmul onto arbiter candidate P (openblas, cublas,
                        compiled); by default the arbiter measures and chooses
  --json                explain: the decision records as JSON
  --export-plan PLAN    explain: also write the decisions as a plan file for --plan
  --background          explain: compile with background decisions (host): print the
                        records the compile returned with (incumbents, "pending"), then
                        those the background measurement landed, and how long each took

run options (and --library, --kernel, --default-libraries, --matmul-delegate as above):
  --entry NAME          the entry function (required)
  --target T            auto (default: the GPU when present, else host), host or nvptx
  --arch sm_XX          GPU architecture (default: the device's)
  --size N              every dynamic dimension (default 64)
  --shape I=AxB         the shape of argument I (overrides --size for it)
  --scalar I=V          the value of scalar argument I (default 1)
  --runs N              timed runs after one warm-up (default 10)
  --seed S              random input seed (default 1)
)";

struct Arguments {
  std::string file;
  std::string emit;
  std::string output;
  tessera::service::CompileRequest options;
  tessera::tools::DelegateFlags delegates;
  bool json = false;
  std::string export_plan;
  bool background = false;  ///< explain: decide in the background, then wait for it
};

/// A registry with the libraries and kernel images `flags` name (CUDA sources compiled for
/// `arch`) and, if asked, the default set of `target`.
absl::StatusOr<std::shared_ptr<tessera::service::Delegates>> MakeDelegates(
    const tessera::tools::DelegateFlags& flags, tessera::runtime::Target target,
    const std::string& arch) {
  auto registry = std::make_shared<tessera::service::Delegates>();
  for (const auto& [name, path] : flags.libraries) {
    if (absl::Status status = registry->RegisterLibrary(name, path); !status.ok()) return status;
  }
  for (const auto& [name, path] : flags.kernels) {
    std::string bytes;
    if (!tessera::ReadFile(path, bytes)) {
      return absl::NotFoundError(absl::StrCat("--kernel ", name, ": cannot read '", path, "'"));
    }
    absl::Status status;
    switch (*tessera::tools::KernelFileOf(path)) {
      case tessera::tools::KernelFile::kCudaSource:
        status = registry->RegisterCudaSource(name, bytes, arch);
        break;
      case tessera::tools::KernelFile::kPtx:
        status = registry->RegisterPtx(name, std::move(bytes));
        break;
      case tessera::tools::KernelFile::kCubin:
        status = registry->RegisterCubin(name, std::move(bytes));
        break;
    }
    if (!status.ok()) return status;
  }
  if (flags.default_libraries) {
    if (absl::Status status = registry->RegisterDefaultLibraries(target); !status.ok()) {
      return status;
    }
  }
  return registry;
}

/// The usage text with the archs the nvptx target supports.
std::string Usage() {
  return absl::StrCat(kUsage, "\nsupported archs (--arch): ",
                      absl::StrJoin(tessera::runtime::SupportedArchs(), ", "), "\n");
}

int Fail(const std::string& message) {
  std::cerr << "tessera-jit: " << message << "\n";
  return 2;
}

bool WriteOutput(const std::string& path, const std::string& contents) {
  if (path.empty()) {
    std::cout << contents;
    return static_cast<bool>(std::cout);
  }
  return tessera::WriteFile(path, contents);
}

/// Parses `compile` and `explain` arguments; returns an error message, or "" on success.
std::string ParseCompile(int argc, char** argv, Arguments& args) {
  std::string error =
      tessera::tools::Flags()
          .CompileRequest(&args.options, &args.delegates)
          .Value("--emit", "mlir, llvm, ptx, cubin or package",
                 [&](const std::string& value) {
                   args.emit = value;
                   if (value == "mlir" || value == "llvm" || value == "ptx" || value == "cubin" ||
                       value == "package") {
                     return std::string();
                   }
                   return absl::StrCat("unknown --emit '", value,
                                       "'; expected mlir, llvm, ptx, cubin or package");
                 })
          .String("-o", &args.output, "a path")
          .Switch("--json", &args.json)
          .String("--export-plan", &args.export_plan, "a path")
          .Switch("--background", &args.background)
          .Positional(&args.file)
          .Parse(argc, argv, 2);
  if (!error.empty()) return error;
  if (args.options.plan_strict && args.options.plan == nullptr) {
    return "--plan-strict needs --plan PLAN";
  }
  if (args.file.empty()) return absl::StrCat(argv[1], " needs a FILE");
  if ((args.emit == "ptx" || args.emit == "cubin") &&
      args.options.target != tessera::runtime::Target::kNvptx) {
    return absl::StrCat("--emit ", args.emit, " needs --target nvptx");
  }
  if ((args.emit == "cubin" || args.emit == "package") && args.output.empty()) {
    return absl::StrCat("--emit ", args.emit, " needs -o OUT");
  }
  if (args.emit != "package" && args.options.arch.find(',') != std::string::npos) {
    return "several --arch values (sm_90,sm_100) are for --emit package";
  }
  if (args.emit != "package" && args.options.host_cpu.find(',') != std::string::npos) {
    return "several --host-cpu values (native,x86-64-v3) are for --emit package";
  }
  return "";
}

/// What `compile --emit EMIT` prints: a text of the module, or (no --emit) its description.
absl::StatusOr<std::string> Render(tessera::service::LoadedModule& module,
                                   const std::string& emit) {
  if (emit.empty()) return module.Describe();
  const tessera::service::ModuleText kind = emit == "mlir"   ? tessera::service::ModuleText::kStages
                                            : emit == "llvm" ? tessera::service::ModuleText::kLlvm
                                            : emit == "ptx"  ? tessera::service::ModuleText::kPtx
                                                             : tessera::service::ModuleText::kCubin;
  absl::StatusOr<absl::string_view> text = module.Text(kind);
  if (!text.ok()) return text.status();
  return std::string(*text);
}

/// Compiles `args.file` with its options and registry through the compile service (its caches
/// and the decision cache beside them; a compile that records its stages is never cached) and
/// loads it, as the C API does. With `worker`, pending background decisions are handed to it.
absl::StatusOr<std::unique_ptr<tessera::service::LoadedModule>> CompileFile(
    Arguments& args, tessera::service::CompileService& service,
    tessera::service::BackgroundDecisions* worker = nullptr) {
  std::string source;
  if (!tessera::ReadFile(args.file, source)) {
    return absl::NotFoundError(absl::StrCat("cannot read '", args.file, "'"));
  }
  args.options.source_name = args.file;
  auto registry = MakeDelegates(args.delegates, args.options.target, args.options.arch);
  if (!registry.ok()) return registry.status();
  args.options.delegates = *registry;
  args.options.decisions = service.MakeDecisionCache();
  auto result = service.Compile(source, args.options);
  if (!result.ok()) return result.status();
  auto loaded = std::make_unique<tessera::service::LoadedModule>(std::move(result->module),
                                                                 tessera::service::LoadOptions());
  if (worker != nullptr) loaded->MeasureInBackground(*worker, std::move(source), args.options);
  return loaded;
}

int ReportFailure(const Arguments& args, const absl::Status& status) {
  std::cerr << args.file << ": " << absl::StatusCodeToString(status.code()) << ": "
            << status.message() << "\n";
  return 1;
}

/// `compile --emit package`: one entry per --host-cpu of a comma-separated list for the host
/// (default: this CPU), or one per --arch for nvptx; written to -o.
int CompilePackage(Arguments& args) {
  const bool nvptx = args.options.target == tessera::runtime::Target::kNvptx;
  std::vector<std::string> machines =
      absl::StrSplit(nvptx ? args.options.arch : args.options.host_cpu, ',', absl::SkipEmpty());
  if (machines.empty() && nvptx) {
    return Fail("--emit package --target nvptx needs --arch (sm_90,sm_100,…)");
  }
  if (machines.empty()) machines.push_back("native");
  std::vector<tessera::service::PackageEntry> entries;
  tessera::service::CompileService service;
  for (const std::string& machine : machines) {
    (nvptx ? args.options.arch : args.options.host_cpu) = machine;
    auto compiled = CompileFile(args, service);
    if (!compiled.ok()) return ReportFailure(args, compiled.status());
    entries.push_back((*compiled)->ServingPackageEntry());
  }
  auto package = tessera::service::WritePackage(entries);
  if (!package.ok()) return ReportFailure(args, package.status());
  return WriteOutput(args.output, *package) ? 0 : Fail("cannot write " + args.output);
}

int Compile(int argc, char** argv) {
  Arguments args;
  if (std::string error = ParseCompile(argc, argv, args); !error.empty()) {
    return Fail(absl::StrCat(error, "\n", Usage()));
  }
  if (args.json) return Fail("--json is an option of explain");
  if (!args.export_plan.empty()) return Fail("--export-plan is an option of explain");
  if (args.background) return Fail("--background is an option of explain");
  args.options.dump_stages = args.emit == "mlir";
  if (args.emit == "ptx") args.options.link_cubin = false;  // nothing reads the cubin
  if (args.emit == "cubin" && !args.options.link_cubin) return Fail("--emit cubin and --ptx-only");
  if (args.emit == "package") return CompilePackage(args);
  tessera::service::CompileService service;
  auto compiled = CompileFile(args, service);
  if (!compiled.ok()) return ReportFailure(args, compiled.status());
  if (args.emit == "cubin" && !(*compiled)->Text(tessera::service::ModuleText::kPtx).ok()) {
    return Fail("--emit cubin: the module has no device code");
  }
  auto text = Render(**compiled, args.emit);
  if (!text.ok()) return ReportFailure(args, text.status());
  return WriteOutput(args.output, *text)
             ? 0
             : Fail("cannot write " + (args.output.empty() ? "the output" : args.output));
}

std::string FormatRecords(const std::vector<tessera::arbiter::DecisionRecord>& records) {
  std::string text;
  for (const tessera::arbiter::DecisionRecord& record : records) {
    absl::StrAppend(&text, tessera::arbiter::FormatRecord(record), "\n");
  }
  return text;
}

/// `explain --background`: the compile returns with incumbents; the worker measures; both sets
/// of records are printed with how long each took.
int ExplainInTheBackground(Arguments& args) {
  if (args.options.target != tessera::runtime::Target::kHost) {
    return Fail("--background decides host compiles only");
  }
  if (args.json || !args.export_plan.empty()) {
    return Fail("--background prints text; it does not take --json or --export-plan");
  }
  args.options.background_decisions = true;
  tessera::service::CompileService service;
  tessera::service::BackgroundDecisions worker(&service);
  const absl::Time start = absl::Now();
  auto compiled = CompileFile(args, service, &worker);
  if (!compiled.ok()) return ReportFailure(args, compiled.status());
  tessera::service::LoadedModule& module = **compiled;
  const absl::Duration returned = absl::Now() - start;
  const size_t pending = module.PendingDecisions();
  std::string text = absl::StrFormat(
      "compile returned in %.1f ms with %d decision(s) pending (their incumbents serve)\n\n",
      absl::ToDoubleMilliseconds(returned), pending);
  absl::StrAppend(&text, FormatRecords(module.incumbent_decisions()));
  if (pending > 0) {
    module.WaitDecisions(absl::InfiniteDuration());
    if (absl::Status failure = module.BackgroundFailure(); !failure.ok()) {
      return ReportFailure(args, failure);
    }
    absl::StrAppend(&text,
                    absl::StrFormat("decisions landed %.1f ms after the compile returned\n\n",
                                    absl::ToDoubleMilliseconds(absl::Now() - start - returned)),
                    FormatRecords(module.serving_decisions()));
  }
  return WriteOutput(args.output, text) ? 0 : Fail("cannot write output");
}

int Explain(int argc, char** argv) {
  Arguments args;
  if (std::string error = ParseCompile(argc, argv, args); !error.empty()) {
    return Fail(absl::StrCat(error, "\n", Usage()));
  }
  if (!args.emit.empty()) return Fail("--emit is an option of compile");
  if (args.background) return ExplainInTheBackground(args);
  tessera::service::CompileService service;
  auto compiled = CompileFile(args, service);
  if (compiled.ok() && !args.export_plan.empty() &&
      !tessera::WriteFile(args.export_plan,
                          std::string(*(*compiled)->Text(tessera::service::ModuleText::kPlan)))) {
    return Fail("cannot write " + args.export_plan);
  }
  if (!compiled.ok()) return ReportFailure(args, compiled.status());
  const std::vector<tessera::arbiter::DecisionRecord>& records = (*compiled)->serving_decisions();
  std::string text;
  if (args.json) {
    text = tessera::arbiter::ToJson(records) + "\n";
  } else if (records.empty()) {
    text = absl::StrCat(args.file, ": no Tile ops, nothing to decide\n");
  } else {
    text = FormatRecords(records);
  }
  return WriteOutput(args.output, text) ? 0 : Fail("cannot write output");
}

/// `--shape I=AxB` / `--scalar I=V`: the index and the rest.
std::string ParseIndexed(const std::string& flag, const std::string& text, int& index,
                         std::string& rest) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || !absl::SimpleAtoi(text.substr(0, eq), &index)) {
    return absl::StrCat(flag, " needs I=VALUE, found '", text, "'");
  }
  rest = text.substr(eq + 1);
  return "";
}

int Run(int argc, char** argv) {
  tessera::tools::RunOptions options;
  std::string file;
  std::string error =
      tessera::tools::Flags()
          .String("--entry", &options.entry, "a name")
          .Value("--target", "auto, host or nvptx",
                 [&](const std::string& value) {
                   options.target = value;
                   return value == "auto" || value == "host" || value == "nvptx"
                              ? std::string()
                              : "--target needs auto, host or nvptx";
                 })
          .String("--arch", &options.arch)
          .Int("--size", &options.size, int64_t{0}, "a non-negative number")
          .Int("--runs", &options.runs, 0, "a non-negative number")
          .Int("--seed", &options.seed, uint32_t{0}, "a number")
          .Delegates(&options.delegates)
          .String("--matmul-delegate", &options.matmul_delegate, "a provider")
          .Value("--shape", "I=AxB",
                 [&](const std::string& value) {
                   int index = 0;
                   std::string rest;
                   if (auto bad = ParseIndexed("--shape", value, index, rest); !bad.empty()) {
                     return bad;
                   }
                   std::vector<int64_t> shape;
                   if (!tessera::tools::ParseShape(rest, shape)) {
                     return "--shape needs sizes like 4x784, found '" + rest + "'";
                   }
                   options.shapes[index] = shape;
                   return std::string();
                 })
          .Value("--scalar", "I=VALUE",
                 [&](const std::string& value) {
                   int index = 0;
                   std::string rest;
                   if (auto bad = ParseIndexed("--scalar", value, index, rest); !bad.empty()) {
                     return bad;
                   }
                   double number = 0;
                   if (!absl::SimpleAtod(rest, &number)) {
                     return "--scalar needs a number, found '" + rest + "'";
                   }
                   options.scalars[index] = number;
                   return std::string();
                 })
          .Positional(&file)
          .Parse(argc, argv, 2);
  if (!error.empty()) return Fail(absl::StrCat(error, "\n", Usage()));
  if (file.empty() || options.entry.empty()) {
    return Fail(absl::StrCat("run needs FILE and --entry NAME\n", Usage()));
  }
  std::string source;
  if (!tessera::ReadFile(file, source)) return Fail(absl::StrCat("cannot read '", file, "'"));
  return tessera::tools::RunEntry(source, file, options, std::cout);
}

int Delegates(int argc, char** argv) {
  tessera::tools::DelegateFlags delegates;
  tessera::service::CompileRequest options;  // only --target, --arch and the delegates matter
  std::string error =
      tessera::tools::Flags().CompileRequest(&options, &delegates).Parse(argc, argv, 2);
  if (!error.empty()) return Fail(absl::StrCat(error, "\n", Usage()));
  auto registry = MakeDelegates(delegates, options.target, options.arch);
  if (!registry.ok()) return Fail(std::string(registry.status().message()));
  for (const auto& identity : (*registry)->Identities()) {
    std::cout << identity.name << "\n  kind:    " << identity.kind;
    if (identity.kind == "library") {
      std::cout << "\n  pointers: " << tessera::runtime::PointerSpaceName(identity.pointers);
    }
    std::cout << "\n  path:    " << identity.path << "\n  soname:  " << identity.soname
              << "\n  version: " << identity.version << "\n  sha256:  " << identity.sha256 << "\n";
  }
  if ((*registry)->Identities().empty()) std::cout << "no delegates registered\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Fail(absl::StrCat("missing command\n", Usage()));
  std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << Usage();
    return 0;
  }
  if (command == "--version") {
    std::cout << kVersion << "\n";
    return 0;
  }
  if (command == "compile") return Compile(argc, argv);
  if (command == "run") return Run(argc, argv);
  if (command == "explain") return Explain(argc, argv);
  if (command == "delegates") return Delegates(argc, argv);
  if (command == "cache") return tessera::tools::RunCacheCommand(argc, argv, std::cout, std::cerr);
  if (command == "repl") return tessera::tools::RunRepl(std::cin, std::cout, isatty(0) != 0);
  return Fail(absl::StrCat("unknown command '", command, "'\n", Usage()));
}
