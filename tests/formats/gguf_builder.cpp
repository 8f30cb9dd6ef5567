#include "formats/gguf_builder.hpp"

#include <cstring>
#include <fstream>
#include <stdexcept>

namespace lpx::test {
namespace {

void append(std::vector<std::uint8_t>& out, const std::vector<std::uint8_t>& bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}

}  // namespace

std::vector<std::uint8_t> le32(std::uint32_t v) {
  return {std::uint8_t(v), std::uint8_t(v >> 8), std::uint8_t(v >> 16), std::uint8_t(v >> 24)};
}

std::vector<std::uint8_t> le64(std::uint64_t v) {
  std::vector<std::uint8_t> out(8);
  for (int i = 0; i < 8; ++i) out[i] = std::uint8_t(v >> (8 * i));
  return out;
}

std::vector<std::uint8_t> gguf_string(const std::string& s) {
  std::vector<std::uint8_t> out = le64(s.size());
  for (char c : s) out.push_back(static_cast<std::uint8_t>(c));  // (insert trips a GCC 12 false
  return out;                                                      //  -Warray-bounds positive)
}

std::vector<std::uint8_t> f32_bytes(float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return le32(bits);
}

std::uint64_t ggml_bytes(std::uint32_t ggml_type, std::uint64_t elements) {
  switch (ggml_type) {
    case kGgmlF32: return elements * 4;
    case kGgmlF16: case kGgmlBF16: return elements * 2;
    case kGgmlQ4_0: return elements / 32 * 18;
    case kGgmlQ4_1: return elements / 32 * 20;
    case kGgmlQ8_0: return elements / 32 * 34;
    case kGgmlQ6_K: return elements / 256 * 210;
    default: return elements;
  }
}

GgufBuilder& GgufBuilder::raw(const std::string& key, std::uint32_t type,
                              std::vector<std::uint8_t> value) {
  std::vector<std::uint8_t> entry = gguf_string(key);
  append(entry, le32(type));
  append(entry, value);
  metadata_.push_back(std::move(entry));
  return *this;
}

GgufBuilder& GgufBuilder::strings(const std::string& key, const std::vector<std::string>& items) {
  std::vector<std::uint8_t> value = le32(kString);
  append(value, le64(items.size()));
  for (const std::string& s : items) append(value, gguf_string(s));
  return raw(key, kArray, std::move(value));
}

GgufBuilder& GgufBuilder::f32s(const std::string& key, const std::vector<float>& items) {
  std::vector<std::uint8_t> value = le32(kF32);
  append(value, le64(items.size()));
  for (float f : items) append(value, f32_bytes(f));
  return raw(key, kArray, std::move(value));
}

GgufBuilder& GgufBuilder::i32s(const std::string& key, const std::vector<std::int32_t>& items) {
  std::vector<std::uint8_t> value = le32(kI32);
  append(value, le64(items.size()));
  for (std::int32_t v : items) append(value, le32(static_cast<std::uint32_t>(v)));
  return raw(key, kArray, std::move(value));
}

GgufBuilder& GgufBuilder::tensor(TensorSpec spec) {
  if (spec.data_bytes == 0) {
    std::uint64_t elements = 1;
    for (std::uint64_t d : spec.dims) elements *= d;
    spec.data_bytes = ggml_bytes(spec.ggml_type, elements);
  }
  tensors_.push_back(std::move(spec));
  return *this;
}

GgufBuilder& GgufBuilder::tensor(const std::string& name, std::uint32_t ggml_type,
                                 std::vector<std::uint64_t> dims) {
  return tensor(TensorSpec{name, ggml_type, std::move(dims), std::nullopt, 0});
}

std::vector<std::uint8_t> GgufBuilder::build() const {
  std::vector<std::uint8_t> out(magic_.begin(), magic_.end());
  append(out, le32(version_));
  append(out, le64(tensor_count_.value_or(tensors_.size())));
  append(out, le64(metadata_count_.value_or(metadata_.size())));
  for (const auto& entry : metadata_) append(out, entry);

  std::vector<std::uint64_t> offsets;
  std::uint64_t next = 0;
  for (const TensorSpec& t : tensors_) {
    std::uint64_t offset = t.offset.value_or(next);
    offsets.push_back(offset);
    next = (offset + t.data_bytes + alignment_ - 1) / alignment_ * alignment_;
    append(out, gguf_string(t.name));
    append(out, le32(static_cast<std::uint32_t>(t.dims.size())));
    for (std::uint64_t d : t.dims) append(out, le64(d));
    append(out, le32(t.ggml_type));
    append(out, le64(offset));
  }
  if (tensors_.empty()) return out;
  while (out.size() % alignment_ != 0) out.push_back(0);
  const std::size_t data_start = out.size();
  constexpr std::uint64_t kMaxFile = 64ull << 20;  // tensors placed beyond it get no data
  for (std::size_t k = 0; k < tensors_.size(); ++k) {
    if (offsets[k] + tensors_[k].data_bytes > kMaxFile) continue;
    const std::size_t end = data_start + offsets[k] + tensors_[k].data_bytes;
    if (out.size() < end) out.resize(end, 0);
    for (std::uint64_t b = 0; b < tensors_[k].data_bytes; ++b) {
      out[data_start + offsets[k] + b] = std::uint8_t(0x11 + 7 * b + 13 * k);  // non-zero pattern
    }
  }
  return out;
}

void GgufBuilder::write(const std::string& path) const {
  const std::vector<std::uint8_t> bytes = build();
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!file) throw std::runtime_error("cannot write " + path);
}

}  // namespace lpx::test
