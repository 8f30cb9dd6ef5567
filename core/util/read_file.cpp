#include "util/read_file.hpp"

#include <fstream>
#include <sstream>

namespace lpx::core {

Expected<std::string> read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(path + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return io_error(path + ": cannot be read");
  return text.str();
}

}  // namespace lpx::core
