// Writes a GGUF file (version 3) front to back without holding tensor data in memory: metadata
// and tensor descriptions first, then each tensor's bytes from a callback, so multi-gigabyte
// models stream straight to disk (synth, convert).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "util/expected.hpp"

namespace lpx::core {

class GgufWriter {
 public:
  // Fills `out` (already sized) with the bytes of rows [first_row, first_row + n_rows).
  using RowSource = std::function<void(std::uint64_t first_row, std::uint64_t n_rows, std::uint8_t* out)>;
  // The same for a source that may fail (a conversion): its error ends write(), which then
  // leaves no file behind.
  using CheckedRowSource =
      std::function<Expected<bool>(std::uint64_t first_row, std::uint64_t n_rows, std::uint8_t* out)>;

  void add_u32(const std::string& key, std::uint32_t value);
  void add_u64(const std::string& key, std::uint64_t value);
  void add_i32(const std::string& key, std::int32_t value);
  void add_i64(const std::string& key, std::int64_t value);
  void add_f32(const std::string& key, float value);
  void add_bool(const std::string& key, bool value);
  void add_string(const std::string& key, const std::string& value);
  void add_strings(const std::string& key, const std::vector<std::string>& values);
  void add_i32s(const std::string& key, const std::vector<std::int32_t>& values);
  void add_f32s(const std::string& key, const std::vector<float>& values);

  // `ggml_type` is GGML's id (F32 0, F16 1, Q4_0 2, Q4_1 3, Q5_0 6, Q8_0 8, Q4_K 12, BF16 30);
  // dims as in GGUF (dims[0] = elements per row); `row_bytes` the bytes of one row.
  void add_tensor(const std::string& name, std::uint32_t ggml_type, std::vector<std::uint64_t> dims,
                  std::uint64_t row_bytes, RowSource source);
  void add_checked_tensor(const std::string& name, std::uint32_t ggml_type,
                          std::vector<std::uint64_t> dims, std::uint64_t row_bytes,
                          CheckedRowSource source);

  // Writes everything to `path` (through `path.partial`, renamed when complete; removed when
  // anything fails).
  Expected<std::uint64_t> write(const std::string& path) const;  // bytes written

 private:
  struct Tensor {
    std::string name;
    std::uint32_t type;
    std::vector<std::uint64_t> dims;
    std::uint64_t row_bytes;
    CheckedRowSource source;
    std::uint64_t rows() const;
  };
  template <class T>
  void add_array(const std::string& key, std::uint32_t type, const std::vector<T>& values);

  std::vector<std::uint8_t> metadata_;  // encoded key/value pairs
  std::uint64_t metadata_count_ = 0;
  std::vector<Tensor> tensors_;
};

}  // namespace lpx::core
