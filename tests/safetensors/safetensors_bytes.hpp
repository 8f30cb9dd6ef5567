// Building .safetensors files and Hugging Face directories for tests: a header's JSON as text
// (so that broken headers are as easy to write as good ones) and the data after it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace lpx::test {

// The 8-byte length, `header` and `data_bytes` bytes of data (a repeating pattern).
std::vector<std::uint8_t> safetensors_bytes(const std::string& header, std::uint64_t data_bytes);
// The same with the length field set to `declared` instead of the header's size.
std::vector<std::uint8_t> safetensors_bytes_declaring(const std::string& header,
                                                      std::uint64_t declared,
                                                      std::uint64_t data_bytes);

// Writes `files` (name -> content) into a fresh directory `dir`.
void write_directory(const std::filesystem::path& dir,
                     const std::map<std::string, std::string>& files);
std::string as_text(const std::vector<std::uint8_t>& bytes);

}  // namespace lpx::test
