// The header of one .safetensors file: an 8-byte little-endian length, then that many bytes of
// JSON naming each tensor's dtype, shape and byte range in the data that follows.
//
// Parsed as strictly as the format's reference implementation: the header must be a JSON object
// of tensors (and an optional "__metadata__" object of strings); the byte ranges must tile the
// data exactly, without gaps or overlaps, and each range must hold exactly its shape's bytes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <tl/expected.hpp>

#include "safetensors_limits.hpp"

namespace lpx::safetensors {

// The dtypes the format defines; only F32, F16 and BF16 hold weights LPX reads.
enum class Dtype { boolean, u8, i8, i16, u16, f16, bf16, i32, u32, f32, f64, i64, u64, f8_e4m3, f8_e5m2 };

const char* dtype_name(Dtype dtype) noexcept;
std::uint32_t dtype_bytes(Dtype dtype) noexcept;

struct TensorEntry {
  std::string name;
  Dtype dtype = Dtype::f32;
  std::vector<std::int64_t> shape;  // outermost first, as PyTorch writes it
  std::uint64_t begin = 0;          // byte offsets from the start of the file, [begin, end)
  std::uint64_t end = 0;
};

struct SafetensorsHeader {
  std::vector<TensorEntry> tensors;  // in the header's order
  std::map<std::string, std::string> metadata;
};

// Parses and validates the header of a file of `size` bytes at `data`. Errors say what is wrong
// and where ("tensor 'model.norm.weight': ..."); the caller adds the file's name.
tl::expected<SafetensorsHeader, std::string> parse_safetensors(const std::uint8_t* data,
                                                               std::uint64_t size,
                                                               const Limits& limits = {});

}  // namespace lpx::safetensors
