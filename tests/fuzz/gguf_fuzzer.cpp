// libFuzzer harness for the GGUF parser: any bytes must give a file or an error, never a crash,
// a hang, an out-of-bounds read or undefined behaviour (built with ASan + UBSan).
#include <cstddef>
#include <cstdint>

#include "gguf_parser.hpp"

namespace {

// Reads everything a consumer could reach through a parsed file.
std::uint64_t touch(const lpx::gguf::GgufFile& file) {
  std::uint64_t sum = file.version + file.alignment + file.data_offset;
  for (const auto& [key, value] : file.metadata) {
    sum += key.size() + value.u + value.string.size();
    if (file.find(key) == nullptr) __builtin_trap();  // every key must be findable
    if (value.type == lpx::gguf::ValueType::array) {
      const lpx::gguf::Array& array = file.arrays.at(value.array);
      for (std::uint64_t k = 0; k < array.count && k < 4096; ++k) {
        sum += file.element(array, k).u + file.element(array, k).string.size();
      }
    }
  }
  for (const lpx::gguf::Tensor& t : file.tensors) sum += t.offset + t.size + t.name.size();
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto file = lpx::gguf::parse_gguf(data, size);
  if (file) {
    volatile std::uint64_t sink = touch(*file);
    (void)sink;
  }
  return 0;
}
