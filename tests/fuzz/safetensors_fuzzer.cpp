// libFuzzer harness for the Hugging Face readers: any bytes must give a result or an error, never
// a crash, a hang, an out-of-bounds read or undefined behaviour (built with ASan + UBSan).
// The first byte picks the reader: a .safetensors header, config.json, or tokenizer.json (with
// the rest of the input as that file).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <boost/json/parse.hpp>

#include "hf_config.hpp"
#include "hf_tokenizer.hpp"
#include "safetensors_header.hpp"

namespace {

void fuzz_json(std::uint8_t which, std::string_view text) {
  boost::json::parse_options options;
  options.max_depth = 64;
  boost::system::error_code error;
  const boost::json::value value = boost::json::parse(text, error, {}, options);
  if (error || !value.is_object()) return;
  lpx::safetensors::MetadataTable out;
  if (which == 1) {
    (void)lpx::safetensors::read_hf_config(value.get_object(), out);
  } else {
    (void)lpx::safetensors::read_hf_tokenizer(value.get_object(), nullptr, nullptr, out);
  }
  for (const char* key : {"tokenizer.ggml.tokens", "tokenizer.ggml.merges", "tokenizer.ggml.scores"}) {
    if (auto array = out.find(key)) {
      for (std::uint64_t k = 0; k < array->length && k < 64; ++k) {
        if (!out.element(key, k)) __builtin_trap();  // every element of an array is readable
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t which = data[0] % 3;
  if (which == 0) {
    auto header = lpx::safetensors::parse_safetensors(data + 1, size - 1);
    if (header) {
      for (const auto& t : header->tensors) {
        if (t.begin > t.end || t.end > size - 1) __builtin_trap();  // ranges lie inside the file
      }
    }
    return 0;
  }
  fuzz_json(which, std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
  return 0;
}

// Boost.JSON compiled into this binary: the fuzzer is built by clang with sanitizers, apart from
// the project's g++ build and its shared Boost.JSON.
#include <boost/json/src.hpp>
