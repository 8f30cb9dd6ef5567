// Writes the safetensors fuzzer's seed corpus: every malformed header of the parser tests and the
// fixtures' good files (shards, config.json, tokenizer.json), each behind the byte that picks its
// reader (see safetensors_fuzzer.cpp).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "safetensors/malformed_safetensors_cases.hpp"

namespace fs = std::filesystem;

namespace {

void save(const fs::path& path, char which, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.put(which);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::uint8_t> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s FIXTURES_HF_DIR OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const fs::path fixtures = argv[1];
  const fs::path out = argv[2];
  fs::create_directories(out);
  for (const auto& c : lpx::test::malformed_safetensors_cases()) {
    save(out / (std::string("header-") + c.name), '\0', c.bytes);
  }
  for (const auto& family : fs::directory_iterator(fixtures)) {
    const std::string name = family.path().filename().string();
    for (const auto& file : fs::directory_iterator(family.path())) {
      const std::string file_name = file.path().filename().string();
      if (file.path().extension() == ".safetensors" && fs::file_size(file.path()) <= 128 * 1024) {
        save(out / (name + "-" + file_name), '\0', read_bytes(file.path()));
      } else if (file_name == "config.json") {
        save(out / (name + "-config"), '\1', read_bytes(file.path()));
      } else if (file_name == "tokenizer.json") {
        save(out / (name + "-tokenizer"), '\2', read_bytes(file.path()));
      }
    }
  }
  return 0;
}
