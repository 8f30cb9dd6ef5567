#include "util/read_file.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace lpx::core {

Expected<std::string> read_whole_file(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return not_found(path + ": no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(path + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return io_error(path + ": cannot be read");
  return text.str();
}

}  // namespace lpx::core
