#include "gguf_parser.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "byte_reader.hpp"
#include "gguf_tensor_types.hpp"

namespace lpx::gguf {
namespace {

constexpr std::uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr std::uint64_t kDefaultAlignment = 32;

std::string quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text.substr(0, 80)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > 80) out += "...";
  return out + "'";
}

// Size in bytes of one fixed-size element, 0 for strings and arrays, -1 for unknown types.
int fixed_size(ValueType type) {
  switch (type) {
    case ValueType::uint8: case ValueType::int8: case ValueType::boolean: return 1;
    case ValueType::uint16: case ValueType::int16: return 2;
    case ValueType::uint32: case ValueType::int32: case ValueType::float32: return 4;
    case ValueType::uint64: case ValueType::int64: case ValueType::float64: return 8;
    case ValueType::string: case ValueType::array: return 0;
  }
  return -1;
}

bool is_power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// Decodes a fixed-size element at `p` (little-endian) into a Value of that type.
Value decode_fixed(ValueType type, const std::uint8_t* p) {
  Value v;
  v.type = type;
  auto load = [p](auto sample) {
    decltype(sample) x;
    std::memcpy(&x, p, sizeof(x));
    return x;
  };
  switch (type) {
    case ValueType::uint8: v.u = load(std::uint8_t{}); break;
    case ValueType::boolean: v.u = load(std::uint8_t{}); break;
    case ValueType::int8: v.i = load(std::int8_t{}); break;
    case ValueType::uint16: v.u = load(std::uint16_t{}); break;
    case ValueType::int16: v.i = load(std::int16_t{}); break;
    case ValueType::uint32: v.u = load(std::uint32_t{}); break;
    case ValueType::int32: v.i = load(std::int32_t{}); break;
    case ValueType::float32: v.f = static_cast<double>(load(float{})); break;
    case ValueType::uint64: v.u = load(std::uint64_t{}); break;
    case ValueType::int64: v.i = load(std::int64_t{}); break;
    case ValueType::float64: v.f = load(double{}); break;
    case ValueType::string: case ValueType::array: break;
  }
  return v;
}

class Parser {
 public:
  Parser(const std::uint8_t* data, std::uint64_t size, const Limits& limits)
      : in_(data, size), size_(size), limits_(limits) {}

  Expected<GgufFile> run() {
    if (auto ok = header(); !ok) return unexpected(ok.error());
    if (auto ok = metadata(); !ok) return unexpected(ok.error());
    if (auto ok = alignment(); !ok) return unexpected(ok.error());
    if (auto ok = tensor_infos(); !ok) return unexpected(ok.error());
    if (auto ok = tensor_data(); !ok) return unexpected(ok.error());
    return std::move(file_);
  }

 private:
  Expected<bool> fail(std::string message) const { return unexpected(std::move(message)); }
  Expected<bool> truncated(const std::string& what) const {
    return fail(what + ": file ends at byte " + std::to_string(size_) + " (truncated)");
  }

  Expected<bool> header() {
    auto magic = in_.read<std::uint32_t>();
    if (!magic || *magic != kMagic) return fail("not a GGUF file (bad magic)");
    auto version = in_.read<std::uint32_t>();
    if (!version) return truncated("header");
    if (*version == 1) return fail("GGUF version 1 is not supported (convert the file to v3)");
    if (*version != 2 && *version != 3) {
      return fail("unsupported GGUF version " + std::to_string(*version) +
                  (*version > 0xffff ? " (a big-endian file?)" : ""));
    }
    file_.version = *version;
    auto tensors = in_.read<std::uint64_t>();
    auto entries = in_.read<std::uint64_t>();
    if (!tensors || !entries) return truncated("header");
    tensor_count_ = *tensors;
    metadata_count_ = *entries;
    // The smallest metadata entry takes 14 bytes and the smallest tensor info 33: a count the
    // remaining bytes cannot hold is rejected before anything is reserved for it.
    if (metadata_count_ > limits_.max_metadata_entries || metadata_count_ > in_.remaining() / 14) {
      return fail("metadata count " + std::to_string(metadata_count_) +
                  " is impossible for a file of " + std::to_string(size_) + " bytes");
    }
    if (tensor_count_ > limits_.max_tensors || tensor_count_ > in_.remaining() / 33) {
      return fail("tensor count " + std::to_string(tensor_count_) +
                  " is impossible for a file of " + std::to_string(size_) + " bytes");
    }
    return true;
  }

  Expected<std::string_view> string(const std::string& what, std::uint64_t max_bytes) {
    auto length = in_.read<std::uint64_t>();
    if (!length) return unexpected(what + ": file ends at byte " + std::to_string(size_) +
                                   " (truncated)");
    if (*length > max_bytes) {
      return unexpected(what + ": string of " + std::to_string(*length) +
                        " bytes exceeds the limit of " + std::to_string(max_bytes));
    }
    auto bytes = in_.read_bytes(*length);
    if (!bytes) {
      return unexpected(what + ": string of " + std::to_string(*length) + " bytes at offset " +
                        std::to_string(in_.position()) + " runs past the end of the file");
    }
    return *bytes;
  }

  Expected<bool> metadata() {
    file_.metadata.reserve(metadata_count_);
    for (std::uint64_t n = 0; n < metadata_count_; ++n) {
      const std::string what = "metadata entry " + std::to_string(n);
      auto key = string(what + " key", limits_.max_key_bytes);
      if (!key) return fail(key.error());
      if (key->empty()) return fail(what + ": empty key");
      if (key->find('\0') != std::string_view::npos) return fail(what + ": key contains NUL");
      if (file_.index.count(*key) != 0) return fail("duplicate metadata key " + quoted(*key));
      auto type = in_.read<std::uint32_t>();
      if (!type) return truncated("metadata " + quoted(*key));
      auto value = read_value(static_cast<ValueType>(*type), "metadata " + quoted(*key), 0);
      if (!value) return fail(value.error());
      file_.index.emplace(*key, file_.metadata.size());
      file_.metadata.emplace_back(*key, *value);
    }
    return true;
  }

  Expected<Value> read_value(ValueType type, const std::string& what, std::uint32_t depth) {
    const int size = fixed_size(type);
    if (size < 0) {
      return unexpected(what + ": unknown value type " +
                        std::to_string(static_cast<std::uint32_t>(type)));
    }
    if (size > 0) {
      const std::uint64_t at = in_.position();
      if (!in_.skip(static_cast<std::uint64_t>(size))) {
        return unexpected(what + ": file ends at byte " + std::to_string(size_) + " (truncated)");
      }
      Value v = decode_fixed(type, in_.data_at(at));
      if (type == ValueType::boolean && v.u > 1) {
        return unexpected(what + ": boolean byte is " + std::to_string(v.u) + ", not 0 or 1");
      }
      return v;
    }
    Value v;
    v.type = type;
    if (type == ValueType::string) {
      auto text = string(what, limits_.max_string_bytes);
      if (!text) return unexpected(text.error());
      v.string = *text;
      return v;
    }
    auto index = read_array(what, depth + 1);
    if (!index) return unexpected(index.error());
    v.array = *index;
    return v;
  }

  Expected<std::uint32_t> read_array(const std::string& what, std::uint32_t depth) {
    if (depth > limits_.max_array_depth) {
      return unexpected(what + ": arrays nested deeper than " +
                        std::to_string(limits_.max_array_depth));
    }
    auto raw_type = in_.read<std::uint32_t>();
    auto count = in_.read<std::uint64_t>();
    if (!raw_type || !count) {
      return unexpected(what + ": file ends at byte " + std::to_string(size_) + " (truncated)");
    }
    const auto type = static_cast<ValueType>(*raw_type);
    const int size = fixed_size(type);
    if (size < 0) {
      return unexpected(what + ": array of unknown value type " + std::to_string(*raw_type));
    }
    if (*count > limits_.max_array_elements) {
      return unexpected(what + ": array of " + std::to_string(*count) +
                        " elements exceeds the limit of " +
                        std::to_string(limits_.max_array_elements));
    }
    // Each element needs at least `minimum` bytes (8 for a string's length, 12 for an array's
    // header), so the count is checked against what is left before anything is reserved.
    const std::uint64_t minimum = size > 0 ? static_cast<std::uint64_t>(size)
                                           : (type == ValueType::string ? 8 : 12);
    if (*count > in_.remaining() / minimum) {
      return unexpected(what + ": array of " + std::to_string(*count) + " " +
                        value_type_name(type) + " elements at offset " +
                        std::to_string(in_.position()) + " runs past the end of the file");
    }
    Array array;
    array.element_type = type;
    array.count = *count;
    if (size > 0) {
      array.data = in_.data_at(in_.position());
      in_.skip(*count * static_cast<std::uint64_t>(size));
      if (type == ValueType::boolean) {
        for (std::uint64_t k = 0; k < *count; ++k) {
          if (array.data[k] > 1) {
            return unexpected(what + ": boolean element " + std::to_string(k) + " is " +
                              std::to_string(array.data[k]) + ", not 0 or 1");
          }
        }
      }
    } else if (type == ValueType::string) {
      array.strings.reserve(*count);
      for (std::uint64_t k = 0; k < *count; ++k) {
        auto text = string(what + " element " + std::to_string(k), limits_.max_string_bytes);
        if (!text) return unexpected(text.error());
        array.strings.push_back(*text);
      }
    } else {
      array.nested.reserve(*count);
      for (std::uint64_t k = 0; k < *count; ++k) {
        auto nested = read_array(what + " element " + std::to_string(k), depth + 1);
        if (!nested) return unexpected(nested.error());
        array.nested.push_back(*nested);
      }
    }
    if (file_.arrays.size() >= std::numeric_limits<std::uint32_t>::max()) {
      return unexpected(what + ": too many arrays");
    }
    file_.arrays.push_back(std::move(array));
    return static_cast<std::uint32_t>(file_.arrays.size() - 1);
  }

  Expected<bool> alignment() {
    const Value* value = file_.find("general.alignment");
    if (value == nullptr) return true;
    if (value->type != ValueType::uint32) {
      return fail(std::string("general.alignment must be a uint32, found a ") +
                  value_type_name(value->type));
    }
    if (!is_power_of_two(value->u) || value->u > limits_.max_alignment) {
      return fail("general.alignment " + std::to_string(value->u) +
                  " is not a power of two between 1 and " + std::to_string(limits_.max_alignment));
    }
    file_.alignment = value->u;
    return true;
  }

  Expected<bool> tensor_infos() {
    file_.tensors.reserve(tensor_count_);
    std::unordered_map<std::string_view, std::uint64_t> names;
    names.reserve(tensor_count_);
    for (std::uint64_t n = 0; n < tensor_count_; ++n) {
      Tensor t;
      auto name = string("tensor " + std::to_string(n) + " name", limits_.max_tensor_name_bytes);
      if (!name) return fail(name.error());
      t.name = *name;
      const std::string what = "tensor " + quoted(t.name);
      if (t.name.empty()) return fail("tensor " + std::to_string(n) + ": empty name");
      if (!names.emplace(t.name, n).second) return fail("duplicate tensor name " + quoted(t.name));
      auto n_dims = in_.read<std::uint32_t>();
      if (!n_dims) return truncated(what);
      if (*n_dims == 0 || *n_dims > LPX_TENSOR_MAX_DIMS) {
        return fail(what + ": " + std::to_string(*n_dims) + " dimensions (1 to " +
                    std::to_string(LPX_TENSOR_MAX_DIMS) + " allowed)");
      }
      t.n_dims = *n_dims;
      std::uint64_t elements = 1;
      for (std::uint32_t d = 0; d < t.n_dims; ++d) {
        auto dim = in_.read<std::uint64_t>();
        if (!dim) return truncated(what);
        if (*dim == 0 || *dim > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
            elements > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) / *dim) {
          return fail(what + ": dimension " + std::to_string(d) + " is " + std::to_string(*dim) +
                      " (zero, or the element count overflows)");
        }
        elements *= *dim;
        t.dims[d] = static_cast<std::int64_t>(*dim);
      }
      auto ggml_type = in_.read<std::uint32_t>();
      auto offset = in_.read<std::uint64_t>();
      if (!ggml_type || !offset) return truncated(what);
      t.ggml_type = *ggml_type;
      auto type = lpx_type_of_ggml(*ggml_type);
      if (!type) {
        return fail(what + ": tensor type " + ggml_type_label(*ggml_type) +
                    " is not supported by LPX");
      }
      t.type = *type;
      auto bytes = tensor_bytes(t.type, t.dims, t.n_dims);
      if (!bytes) return fail(what + ": " + bytes.error());
      t.size = *bytes;
      if (*offset % file_.alignment != 0) {
        return fail(what + ": data offset " + std::to_string(*offset) +
                    " is not a multiple of the alignment " + std::to_string(file_.alignment));
      }
      t.offset = *offset;  // relative for now; made absolute in tensor_data()
      file_.tensors.push_back(t);
    }
    return true;
  }

  Expected<bool> tensor_data() {
    const std::uint64_t end_of_infos = in_.position();
    const std::uint64_t padding = (file_.alignment - end_of_infos % file_.alignment) % file_.alignment;
    file_.data_offset = end_of_infos + padding;
    if (file_.tensors.empty()) return true;
    if (file_.data_offset > size_) return truncated("tensor data section");
    const std::uint64_t data_bytes = size_ - file_.data_offset;

    std::vector<std::size_t> order(file_.tensors.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return file_.tensors[a].offset < file_.tensors[b].offset;
    });
    const Tensor* previous = nullptr;
    for (std::size_t k : order) {
      Tensor& t = file_.tensors[k];
      const std::string what = "tensor " + quoted(t.name);
      if (t.offset > data_bytes || t.size > data_bytes - t.offset) {
        return fail(what + ": data [" + std::to_string(t.offset) + ", " +
                    std::to_string(t.offset) + "+" + std::to_string(t.size) +
                    ") runs past the end of the data section (" + std::to_string(data_bytes) +
                    " bytes from offset " + std::to_string(file_.data_offset) + ")");
      }
      if (previous != nullptr && t.offset < previous->offset + previous->size) {
        return fail(what + ": data at offset " + std::to_string(t.offset) +
                    " overlaps tensor " + quoted(previous->name) + " [" +
                    std::to_string(previous->offset) + ", " +
                    std::to_string(previous->offset + previous->size) + ")");
      }
      previous = &t;
    }
    for (Tensor& t : file_.tensors) t.offset += file_.data_offset;
    return true;
  }

  ByteReader in_;
  std::uint64_t size_;
  const Limits& limits_;
  std::uint64_t tensor_count_ = 0;
  std::uint64_t metadata_count_ = 0;
  GgufFile file_;
};

}  // namespace

const char* value_type_name(ValueType type) {
  switch (type) {
    case ValueType::uint8: return "uint8";
    case ValueType::int8: return "int8";
    case ValueType::uint16: return "uint16";
    case ValueType::int16: return "int16";
    case ValueType::uint32: return "uint32";
    case ValueType::int32: return "int32";
    case ValueType::float32: return "float32";
    case ValueType::boolean: return "bool";
    case ValueType::string: return "string";
    case ValueType::array: return "array";
    case ValueType::uint64: return "uint64";
    case ValueType::int64: return "int64";
    case ValueType::float64: return "float64";
  }
  return "unknown";
}

const Value* GgufFile::find(std::string_view key) const {
  auto it = index.find(key);
  return it == index.end() ? nullptr : &metadata[it->second].second;
}

Value GgufFile::element(const Array& array, std::uint64_t k) const {
  Value v;
  v.type = array.element_type;
  if (k >= array.count) return v;
  if (array.element_type == ValueType::string) {
    v.string = array.strings[k];
  } else if (array.element_type == ValueType::array) {
    v.array = array.nested[k];
  } else {
    v = decode_fixed(array.element_type,
                     array.data + k * static_cast<std::uint64_t>(fixed_size(array.element_type)));
  }
  return v;
}

Expected<GgufFile> parse_gguf(const std::uint8_t* data, std::uint64_t size,
                                    const Limits& limits) {
  return Parser(data, size, limits).run();
}

}  // namespace lpx::gguf
