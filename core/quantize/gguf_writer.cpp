#include "quantize/gguf_writer.hpp"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "util/remove_unless_kept.hpp"

namespace lpx::core {
namespace {

constexpr std::uint64_t kAlignment = 32;
enum : std::uint32_t { kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7, kString = 8, kArray = 9, kU64 = 10, kI64 = 11 };

void put(std::vector<std::uint8_t>& out, const void* data, std::size_t n) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  out.insert(out.end(), p, p + n);
}
void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) { put(out, &v, 4); }  // little-endian hosts
void put_u64(std::vector<std::uint8_t>& out, std::uint64_t v) { put(out, &v, 8); }
void put_string(std::vector<std::uint8_t>& out, const std::string& s) {
  put_u64(out, s.size());
  put(out, s.data(), s.size());
}

std::uint64_t aligned(std::uint64_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

}  // namespace

std::uint64_t GgufWriter::Tensor::rows() const {
  std::uint64_t n = 1;
  for (std::size_t i = 1; i < dims.size(); ++i) n *= dims[i];
  return n;
}

void GgufWriter::add_u32(const std::string& key, std::uint32_t value) {
  put_string(metadata_, key);
  put_u32(metadata_, kU32);
  put_u32(metadata_, value);
  ++metadata_count_;
}

void GgufWriter::add_u64(const std::string& key, std::uint64_t value) {
  put_string(metadata_, key);
  put_u32(metadata_, kU64);
  put_u64(metadata_, value);
  ++metadata_count_;
}

void GgufWriter::add_i32(const std::string& key, std::int32_t value) {
  put_string(metadata_, key);
  put_u32(metadata_, kI32);
  put(metadata_, &value, 4);
  ++metadata_count_;
}

void GgufWriter::add_i64(const std::string& key, std::int64_t value) {
  put_string(metadata_, key);
  put_u32(metadata_, kI64);
  put(metadata_, &value, 8);
  ++metadata_count_;
}

void GgufWriter::add_f32(const std::string& key, float value) {
  put_string(metadata_, key);
  put_u32(metadata_, kF32);
  put(metadata_, &value, 4);
  ++metadata_count_;
}

void GgufWriter::add_bool(const std::string& key, bool value) {
  put_string(metadata_, key);
  put_u32(metadata_, kBool);
  metadata_.push_back(value ? 1 : 0);
  ++metadata_count_;
}

void GgufWriter::add_string(const std::string& key, const std::string& value) {
  put_string(metadata_, key);
  put_u32(metadata_, kString);
  put_string(metadata_, value);
  ++metadata_count_;
}

void GgufWriter::add_strings(const std::string& key, const std::vector<std::string>& values) {
  put_string(metadata_, key);
  put_u32(metadata_, kArray);
  put_u32(metadata_, kString);
  put_u64(metadata_, values.size());
  for (const std::string& v : values) put_string(metadata_, v);
  ++metadata_count_;
}

// An array of 4-byte little-endian values (this writer runs on little-endian hosts only).
template <class T>
void GgufWriter::add_array(const std::string& key, std::uint32_t type, const std::vector<T>& values) {
  static_assert(sizeof(T) == 4);
  put_string(metadata_, key);
  put_u32(metadata_, kArray);
  put_u32(metadata_, type);
  put_u64(metadata_, values.size());
  put(metadata_, values.data(), values.size() * 4);
  ++metadata_count_;
}

void GgufWriter::add_i32s(const std::string& key, const std::vector<std::int32_t>& values) {
  add_array(key, kI32, values);
}

void GgufWriter::add_f32s(const std::string& key, const std::vector<float>& values) {
  add_array(key, kF32, values);
}

void GgufWriter::add_tensor(const std::string& name, std::uint32_t ggml_type,
                            std::vector<std::uint64_t> dims, std::uint64_t row_bytes, RowSource source) {
  add_checked_tensor(name, ggml_type, std::move(dims), row_bytes,
             [source = std::move(source)](std::uint64_t first, std::uint64_t n, std::uint8_t* out) -> Expected<bool> {
               source(first, n, out);
               return true;
             });
}

void GgufWriter::add_checked_tensor(const std::string& name, std::uint32_t ggml_type,
                                    std::vector<std::uint64_t> dims, std::uint64_t row_bytes,
                                    CheckedRowSource source) {
  tensors_.push_back({name, ggml_type, std::move(dims), row_bytes, std::move(source)});
}

Expected<std::uint64_t> GgufWriter::write(const std::string& path) const {
  std::vector<std::uint8_t> head;
  put(head, "GGUF", 4);
  put_u32(head, 3);
  put_u64(head, tensors_.size());
  put_u64(head, metadata_count_);
  head.insert(head.end(), metadata_.begin(), metadata_.end());
  std::uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    put_string(head, t.name);
    put_u32(head, static_cast<std::uint32_t>(t.dims.size()));
    for (std::uint64_t d : t.dims) put_u64(head, d);
    put_u32(head, t.type);
    put_u64(head, offset);
    offset = aligned(offset + t.rows() * t.row_bytes);
  }
  head.resize(aligned(head.size()), 0);

  const std::string partial = path + ".partial";
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(partial.c_str(), "wb"), &std::fclose);
  if (!file) return io_error(partial + ": cannot create: " + std::strerror(errno));
  RemoveUnlessKept cleanup(partial);  // a run that fails leaves nothing behind
  const auto write_bytes = [&](const std::uint8_t* data, std::size_t n) {
    return std::fwrite(data, 1, n, file.get()) == n;
  };
  bool ok = write_bytes(head.data(), head.size());
  std::uint64_t written = head.size();
  std::vector<std::uint8_t> buffer;
  for (const Tensor& t : tensors_) {
    const std::uint64_t rows = t.rows();
    const std::uint64_t rows_per_chunk = std::max<std::uint64_t>(1, (4u << 20) / t.row_bytes);
    for (std::uint64_t r = 0; ok && r < rows; r += rows_per_chunk) {
      const std::uint64_t n = std::min(rows_per_chunk, rows - r);
      buffer.resize(n * t.row_bytes);
      if (auto filled = t.source(r, n, buffer.data()); !filled) return unexpected(filled.error());
      ok = write_bytes(buffer.data(), buffer.size());
      written += buffer.size();
    }
    const std::uint64_t padding = aligned(rows * t.row_bytes) - rows * t.row_bytes;
    buffer.assign(padding, 0);
    if (ok && padding) ok = write_bytes(buffer.data(), padding);
    written += padding;
  }
  if (!ok || std::fflush(file.get()) != 0) {
    return io_error(partial + ": write failed: " + std::strerror(errno));
  }
  file.reset();
  std::error_code ec;
  std::filesystem::rename(partial, path, ec);
  if (ec) return io_error(path + ": " + ec.message());
  cleanup.keep();
  return written;
}

}  // namespace lpx::core
