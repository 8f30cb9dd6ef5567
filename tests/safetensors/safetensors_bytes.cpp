#include "safetensors/safetensors_bytes.hpp"

#include <fstream>

namespace lpx::test {

std::vector<std::uint8_t> safetensors_bytes_declaring(const std::string& header,
                                                      std::uint64_t declared,
                                                      std::uint64_t data_bytes) {
  std::vector<std::uint8_t> out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(declared >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  for (std::uint64_t k = 0; k < data_bytes; ++k) out.push_back(static_cast<std::uint8_t>(k * 7 + 1));
  return out;
}

std::vector<std::uint8_t> safetensors_bytes(const std::string& header, std::uint64_t data_bytes) {
  return safetensors_bytes_declaring(header, header.size(), data_bytes);
}

std::string as_text(const std::vector<std::uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }

void write_directory(const std::filesystem::path& dir, const std::map<std::string, std::string>& files) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const auto& [name, content] : files) {
    std::ofstream out(dir / name, std::ios::binary);
    out << content;
  }
}

}  // namespace lpx::test
