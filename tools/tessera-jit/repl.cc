// The tessera-jit REPL.
#include "tools/tessera-jit/repl.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "tessera_jit.h"
#include "tools/tessera-jit/runner.h"

namespace tessera::tools {
namespace {

constexpr char kHelp[] = R"(commands:
  :load FILE                 replace the buffer with the IR in FILE
  :show                      print the buffer
  :clear                     empty the buffer
  :entries                   compile the buffer and list its entry functions
  :run ENTRY [SIZE]          run ENTRY on random inputs (every dynamic size = SIZE, default 64)
  :time ENTRY [SIZE] [RUNS]  like :run, timing RUNS runs (default 100)
  :ptx                       compile the buffer for nvptx and print its PTX
  :target auto|host|nvptx    where :run runs (default auto: the GPU when present)
  :help                      this text
  :quit                      leave
any other line is appended to the buffer (paste IR)
)";

/// Compiles `source` for `target` and hands the module to `use`; prints errors.
template <typename Fn>
void WithModule(const std::string& source, const char* target, std::ostream& out, Fn use) {
  tessera_jit_context_options_t context_options;
  tessera_jit_context_options_init(&context_options);
  context_options.default_target = target;
  tessera_jit_context_t* context = nullptr;
  tessera_jit_module_t* module = nullptr;
  tessera_jit_error_t* error = tessera_jit_context_create(&context_options, &context);
  if (error == nullptr) {
    error = tessera_jit_compile(context, source.data(), source.size(), nullptr, &module);
  }
  if (error != nullptr) {
    out << "error: " << tessera_jit_error_message(error, nullptr) << "\n";
    tessera_jit_error_destroy(error);
  } else {
    use(module);
  }
  tessera_jit_module_destroy(module);
  tessera_jit_context_destroy(context);
}

}  // namespace

int RunRepl(std::istream& in, std::ostream& out, bool prompt) {
  std::string buffer;
  std::string target = "auto";
  out << "tessera-jit repl — :help for commands\n";
  std::string line;
  while (true) {
    if (prompt) out << (buffer.empty() ? "tessera> " : "...> ") << std::flush;
    if (!std::getline(in, line)) break;
    if (line.empty() || line[0] != ':') {
      buffer += line + "\n";
      continue;
    }
    std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    const std::string& command = words[0];
    if (command == ":quit" || command == ":q") break;
    if (command == ":help") {
      out << kHelp;
    } else if (command == ":clear") {
      buffer.clear();
    } else if (command == ":show") {
      out << buffer;
    } else if (command == ":load" && words.size() == 2) {
      std::ifstream file(words[1]);
      if (!file) {
        out << "error: cannot read '" << words[1] << "'\n";
        continue;
      }
      std::ostringstream contents;
      contents << file.rdbuf();
      buffer = contents.str();
      out << "loaded " << words[1] << " (" << buffer.size() << " bytes)\n";
    } else if (command == ":target" && words.size() == 2 &&
               (words[1] == "auto" || words[1] == "host" || words[1] == "nvptx")) {
      target = words[1];
      out << "target: " << target << "\n";
    } else if (command == ":entries") {
      WithModule(buffer, "host", out, [&](tessera_jit_module_t* module) {
        for (size_t i = 0; i < tessera_jit_module_get_entry_count(module); ++i) {
          out << "@" << tessera_jit_module_get_entry_name(module, i, nullptr) << "\n";
        }
      });
    } else if (command == ":ptx") {
      WithModule(buffer, "nvptx", out, [&](tessera_jit_module_t* module) {
        const char* ptx = nullptr;
        size_t size = 0;
        tessera_jit_error_t* error =
            tessera_jit_module_get_text(module, TESSERA_JIT_TEXT_PTX, &ptx, &size);
        if (error != nullptr) {
          out << "error: " << tessera_jit_error_message(error, nullptr) << "\n";
          tessera_jit_error_destroy(error);
        } else {
          out << std::string(ptx, size);
        }
      });
    } else if ((command == ":run" || command == ":time") && words.size() >= 2) {
      RunOptions options;
      options.entry = words[1];
      options.target = target;
      options.runs = command == ":time" ? 100 : 1;
      if ((words.size() >= 3 && !absl::SimpleAtoi(words[2], &options.size)) ||
          (words.size() >= 4 && !absl::SimpleAtoi(words[3], &options.runs))) {
        out << "error: SIZE and RUNS are numbers\n";
        continue;
      }
      RunEntry(buffer, "<repl>", options, out);
    } else {
      out << "unknown or incomplete command '" << line << "'; :help lists the commands\n";
    }
  }
  return 0;
}

}  // namespace tessera::tools
