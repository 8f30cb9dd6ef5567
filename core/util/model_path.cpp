#include "util/model_path.hpp"

#include <algorithm>

#include "util/sha256.hpp"

namespace lpx::core {

namespace fs = std::filesystem;

std::vector<fs::path> model_files(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {fs::path(path)};
  std::vector<fs::path> files;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::uint64_t model_bytes(const std::string& path) {
  std::uint64_t total = 0;
  for (const fs::path& file : model_files(path)) {
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    if (!ec) total += size;
  }
  return total;
}

std::string model_state(const std::string& path) {
  fs::file_time_type newest{};
  for (const fs::path& file : model_files(path)) {
    std::error_code ec;
    const auto time = fs::last_write_time(file, ec);
    if (!ec) newest = std::max(newest, time);
  }
  return std::to_string(model_bytes(path)) + "@" + std::to_string(newest.time_since_epoch().count());
}

Expected<std::string> model_sha256(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return sha256_file(path);
  std::string lines;
  for (const fs::path& file : model_files(path)) {
    auto hash = sha256_file(file.string());
    if (!hash) return hash;
    lines += *hash + "  " + file.filename().string() + "\n";
  }
  return sha256_hex(lines.data(), lines.size());
}

}  // namespace lpx::core
