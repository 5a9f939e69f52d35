// Whole-file reads and writes.
#ifndef TESSERA_BASE_FILES_H_
#define TESSERA_BASE_FILES_H_

#include <fstream>
#include <sstream>
#include <string>

namespace tessera {

/// Reads the file at `path` into `contents`; false when it cannot be read.
inline bool ReadFile(const std::string& path, std::string& contents) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  contents = buffer.str();
  return true;
}

/// Replaces the file at `path` with `contents`; false when it cannot be written whole.
inline bool WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace tessera

#endif  // TESSERA_BASE_FILES_H_
