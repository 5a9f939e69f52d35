// What the benchmark programs share: timing series and their medians, the per-step times of
// Tessera's compiles, running a command, and the virtual environments of the Python columns.
#ifndef TESSERA_BENCH_BENCH_UTIL_H_
#define TESSERA_BENCH_BENCH_UTIL_H_

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tessera::bench {

/// Milliseconds of repeated runs of one thing.
struct Series {
  std::string name;
  std::vector<double> ms;

  double Median() const;
  double Min() const;
};

/// Runs `body` once (its time in `first_ms`: one-time initialisation shows there), then `runs`
/// times into the returned series.
Series Measure(const std::string& name, int runs, double& first_ms,
               const std::function<void()>& body);

/// The medians of a compile's steps (CompiledModule::stage_ms) over runs, in first-seen order;
/// a step that occurs twice in one run counts once with its times summed.
struct StageSeries {
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> ms;

  void Add(const std::vector<std::pair<std::string, double>>& stages);
  double Median(const std::string& name) const;
  /// "name median" pairs for a table row, and the same as a JSON object's members.
  std::string Text() const;
  std::string Json() const;
};

/// Runs `command` with /bin/sh and returns its standard output; `status` is pclose's.
std::string RunCommand(const std::string& command, int& status);

bool FileExists(const std::string& path);

/// `relative` (a file of bench/'s data) in the runfiles of `argv0`, else as given (a run from
/// the repository root).
std::string DataFile(const char* argv0, const std::string& relative);

/// ~/.cache/tessera-jit/NAME-venv (or /tmp/... without $HOME).
std::string DefaultVenv(const std::string& name);

/// Makes `venv` (once) with `packages` from PyPI when `import_check` (Python statements) fails
/// in it. Returns an empty string when the venv is ready, else why it is not.
std::string EnsureVenv(const std::string& venv, const std::string& packages,
                       const std::string& import_check);

/// A column measured by a Python script: per kernel, the median and the first call's ms.
struct PythonColumn {
  std::string version;  ///< the tool's version; empty when not measured (`why` says why)
  std::string why;
  std::map<std::string, double> median_ms, first_ms;
};

/// Runs `python arguments` (a script and its flags, quoted for the shell), which prints
/// {"version": V, "kernels": {NAME: {"median_ms": M, "first_ms": F}}}.
PythonColumn RunPythonColumn(const std::string& python, const std::string& arguments);

}  // namespace tessera::bench

#endif  // TESSERA_BENCH_BENCH_UTIL_H_
