// Writes GGUF files for tests — valid ones, and broken ones on purpose. Every field can be set to
// any raw value, so a malformed-file test states exactly what is wrong with its file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lpx::test {

// GGUF value type ids (the specification's numbering).
enum GgufTypeId : std::uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7, kString = 8,
  kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};

// GGML tensor type ids used by the tests.
enum GgmlTypeId : std::uint32_t {
  kGgmlF32 = 0, kGgmlF16 = 1, kGgmlQ4_0 = 2, kGgmlQ4_1 = 3, kGgmlQ8_0 = 8, kGgmlQ2_K = 10,
  kGgmlQ6_K = 14, kGgmlBF16 = 30,
};

// Little-endian encoders for hand-made values.
std::vector<std::uint8_t> le32(std::uint32_t v);
std::vector<std::uint8_t> le64(std::uint64_t v);
std::vector<std::uint8_t> gguf_string(const std::string& s);
std::vector<std::uint8_t> f32_bytes(float v);

class GgufBuilder {
 public:
  struct TensorSpec {
    std::string name;
    std::uint32_t ggml_type = kGgmlF32;
    std::vector<std::uint64_t> dims;
    std::optional<std::uint64_t> offset;  // default: packed after the previous one, aligned
    std::uint64_t data_bytes = 0;         // bytes of data reserved for it in the data section
  };

  GgufBuilder& version(std::uint32_t v) { version_ = v; return *this; }
  GgufBuilder& magic(std::string m) { magic_ = std::move(m); return *this; }
  GgufBuilder& tensor_count_override(std::uint64_t n) { tensor_count_ = n; return *this; }
  GgufBuilder& metadata_count_override(std::uint64_t n) { metadata_count_ = n; return *this; }
  // Alignment used to lay out the data section (also write general.alignment to make it real).
  GgufBuilder& layout_alignment(std::uint64_t a) { alignment_ = a; return *this; }

  // A metadata entry whose value bytes are given raw (after the type id).
  GgufBuilder& raw(const std::string& key, std::uint32_t type, std::vector<std::uint8_t> value);
  GgufBuilder& u32(const std::string& key, std::uint32_t v) { return raw(key, kU32, le32(v)); }
  GgufBuilder& f32(const std::string& key, float v) { return raw(key, kF32, f32_bytes(v)); }
  GgufBuilder& boolean(const std::string& key, bool v) { return raw(key, kBool, {std::uint8_t(v)}); }
  GgufBuilder& string(const std::string& key, const std::string& v) {
    return raw(key, kString, gguf_string(v));
  }
  GgufBuilder& strings(const std::string& key, const std::vector<std::string>& items);
  GgufBuilder& f32s(const std::string& key, const std::vector<float>& items);
  GgufBuilder& i32s(const std::string& key, const std::vector<std::int32_t>& items);

  // A tensor with `dims`; its data size is computed for F32/F16/BF16/Q4_0/Q4_1/Q8_0/Q6_K unless
  // set in the spec. The data bytes are a deterministic non-zero pattern.
  GgufBuilder& tensor(TensorSpec spec);
  GgufBuilder& tensor(const std::string& name, std::uint32_t ggml_type,
                      std::vector<std::uint64_t> dims);

  std::vector<std::uint8_t> build() const;
  // build() written to `path`.
  void write(const std::string& path) const;

 private:
  std::string magic_ = "GGUF";
  std::uint32_t version_ = 3;
  std::optional<std::uint64_t> tensor_count_;
  std::optional<std::uint64_t> metadata_count_;
  std::uint64_t alignment_ = 32;
  std::vector<std::vector<std::uint8_t>> metadata_;  // encoded entries
  std::vector<TensorSpec> tensors_;
};

// Bytes of a tensor of `ggml_type` with `elements` elements (types the builder knows).
std::uint64_t ggml_bytes(std::uint32_t ggml_type, std::uint64_t elements);

}  // namespace lpx::test
