// What the benchmark programs share (bench_util.h).
#include "bench/bench_util.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "llvm/Support/JSON.h"

namespace tessera::bench {
namespace {

double MedianOf(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

double Series::Median() const { return MedianOf(ms); }

double Series::Min() const { return ms.empty() ? 0.0 : *std::min_element(ms.begin(), ms.end()); }

Series Measure(const std::string& name, int runs, double& first_ms,
               const std::function<void()>& body) {
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  body();
  first_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  Series series{name, {}};
  for (int i = 0; i < runs; ++i) {
    start = Clock::now();
    body();
    series.ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return series;
}

void StageSeries::Add(const std::vector<std::pair<std::string, double>>& stages) {
  std::map<std::string, double> run;
  for (const auto& [name, ms_taken] : stages) {
    if (run.find(name) == run.end() && ms.find(name) == ms.end()) order.push_back(name);
    run[name] += ms_taken;
  }
  for (const auto& [name, ms_taken] : run) ms[name].push_back(ms_taken);
}

double StageSeries::Median(const std::string& name) const {
  auto found = ms.find(name);
  return found == ms.end() ? 0.0 : MedianOf(found->second);
}

std::string StageSeries::Text() const {
  std::string text;
  for (const std::string& name : order) {
    absl::StrAppend(&text, "  ", name, " ", absl::StrFormat("%.2f", Median(name)));
  }
  return text;
}

std::string StageSeries::Json() const {
  std::string json;
  for (const std::string& name : order) {
    absl::StrAppend(&json, json.empty() ? "" : ", ",
                    absl::StrFormat("\"%s\": %.4f", name, Median(name)));
  }
  return absl::StrCat("{", json, "}");
}

std::string RunCommand(const std::string& command, int& status) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    status = -1;
    return output;
  }
  char buffer[4096];
  size_t read = 0;
  while ((read = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, read);
  status = pclose(pipe);
  return output;
}

bool FileExists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

std::string DataFile(const char* argv0, const std::string& relative) {
  const std::string runfiles = absl::StrCat(argv0, ".runfiles/_main/", relative);
  return FileExists(runfiles) ? runfiles : relative;
}

std::string DefaultVenv(const std::string& name) {
  const char* home = std::getenv("HOME");
  return absl::StrCat(home != nullptr ? home : "/tmp", "/.cache/tessera-jit/", name, "-venv");
}

std::string EnsureVenv(const std::string& venv, const std::string& packages,
                       const std::string& import_check) {
  const std::string python = venv + "/bin/python";
  int status = 0;
  RunCommand(absl::StrCat("'", python, "' -c '", import_check, "' 2>/dev/null"), status);
  if (status == 0) return "";
  std::cerr << "creating " << venv << " with " << packages << " from PyPI (once)...\n";
  RunCommand(absl::StrCat("python3 -m venv '", venv, "' >&2 && '", venv, "/bin/pip' install -q ",
                          packages, " >&2"),
             status);
  if (status != 0) return absl::StrCat("creating the venv or pip install ", packages, " failed");
  RunCommand(absl::StrCat("'", python, "' -c '", import_check, "' 2>/dev/null"), status);
  return status == 0 ? "" : absl::StrCat("'", import_check, "' fails in ", venv);
}

PythonColumn RunPythonColumn(const std::string& python, const std::string& arguments) {
  PythonColumn column;
  int status = 0;
  const std::string output =
      RunCommand(absl::StrCat("'", python, "' ", arguments, " 2>/dev/null"), status);
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(output);
  const llvm::json::Object* object = parsed ? parsed->getAsObject() : nullptr;
  if (!parsed) llvm::consumeError(parsed.takeError());
  const llvm::json::Object* kernels = object ? object->getObject("kernels") : nullptr;
  if (status != 0 || kernels == nullptr) {
    column.why = absl::StrCat(arguments, " failed (exit ", status, ")");
    return column;
  }
  if (auto version = object->getString("version")) column.version = version->str();
  for (const auto& [name, value] : *kernels) {
    if (const llvm::json::Object* times = value.getAsObject()) {
      column.median_ms[name.str()] = times->getNumber("median_ms").value_or(0);
      column.first_ms[name.str()] = times->getNumber("first_ms").value_or(0);
    }
  }
  if (column.version.empty()) column.why = "the script printed no version";
  return column;
}

}  // namespace tessera::bench
