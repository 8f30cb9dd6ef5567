// The parsed structure of a GGUF file: metadata and tensor table as views into the file's bytes.
// Everything here borrows from the buffer the file was parsed from and lives as long as it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lpx/kinds/tensor.h"

namespace lpx::gguf {

// Value types as numbered by the GGUF specification.
enum class ValueType : std::uint32_t {
  uint8 = 0, int8 = 1, uint16 = 2, int16 = 3, uint32 = 4, int32 = 5, float32 = 6, boolean = 7,
  string = 8, array = 9, uint64 = 10, int64 = 11, float64 = 12,
};

// "uint32", "string", ... ; "unknown" for anything else.
const char* value_type_name(ValueType type);

// One metadata value. Scalars are widened; strings and arrays refer into the file.
struct Value {
  ValueType type = ValueType::uint8;
  std::uint64_t u = 0;       // unsigned integers and booleans
  std::int64_t i = 0;        // signed integers
  double f = 0;              // floats
  std::string_view string;   // strings (bytes as stored; GGUF says UTF-8)
  std::uint32_t array = 0;   // arrays: index into GgufFile::arrays
};

struct Array {
  ValueType element_type = ValueType::uint8;
  std::uint64_t count = 0;
  const std::uint8_t* data = nullptr;     // fixed-size elements: packed little-endian values
  std::vector<std::string_view> strings;  // string elements
  std::vector<std::uint32_t> nested;      // array elements: indices into GgufFile::arrays
};

struct Tensor {
  std::string_view name;
  std::uint32_t ggml_type = 0;
  lpx_tensor_type type = LPX_TENSOR_F32;
  std::uint32_t n_dims = 0;
  std::int64_t dims[LPX_TENSOR_MAX_DIMS] = {1, 1, 1, 1};  // dims[0] is contiguous
  std::uint64_t offset = 0;  // from the start of the file (the data section offset added)
  std::uint64_t size = 0;    // bytes
};

struct GgufFile {
  std::uint32_t version = 0;
  std::uint64_t alignment = 32;
  std::uint64_t data_offset = 0;  // where the tensor data section starts
  std::vector<std::pair<std::string_view, Value>> metadata;  // in file order
  std::vector<Array> arrays;
  std::vector<Tensor> tensors;    // in file order

  const Value* find(std::string_view key) const;
  // Element `index` of `array` as a value (its type is the array's element type).
  Value element(const Array& array, std::uint64_t index) const;

  std::unordered_map<std::string_view, std::size_t> index;  // key -> position in metadata
};

}  // namespace lpx::gguf
