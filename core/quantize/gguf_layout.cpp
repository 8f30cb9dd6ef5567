#include "quantize/gguf_layout.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>

#include "lpx/cpp/tensor_types.hpp"

namespace lpx::core {
namespace {

constexpr std::uint32_t kString = 8, kArray = 9;

// Sequential little-endian reads with the position and the file's size at hand for messages.
class Reader {
 public:
  Reader(const std::string& path, std::uint64_t size) : in_(path, std::ios::binary), path_(path), size_(size) {}
  bool open() const { return static_cast<bool>(in_); }
  std::uint64_t position() const { return position_; }

  Expected<std::uint64_t> integer(unsigned bytes, const char* what) {
    if (position_ + bytes > size_) return past_end(what);
    unsigned char buffer[8] = {};
    in_.read(reinterpret_cast<char*>(buffer), bytes);
    if (!in_) return io_error(path_ + ": read failed at offset " + std::to_string(position_));
    position_ += bytes;
    std::uint64_t value = 0;
    for (unsigned i = 0; i < bytes; ++i) value |= std::uint64_t{buffer[i]} << (8 * i);
    return value;
  }
  // A string of at most `limit` bytes (keys and names are short; values are skipped instead).
  Expected<std::string> string(const char* what, std::uint64_t limit) {
    auto length = integer(8, what);
    if (!length) return unexpected(length.error());
    if (*length > size_ - position_) return past_end(what);
    if (*length > limit) {
      return invalid_argument(path_ + ": " + what + " at offset " + std::to_string(position_) + " is " +
                              std::to_string(*length) + " bytes long (at most " + std::to_string(limit) + ")");
    }
    std::string text(*length, '\0');
    in_.read(text.data(), static_cast<std::streamsize>(*length));
    if (!in_) return io_error(path_ + ": read failed at offset " + std::to_string(position_));
    position_ += *length;
    return text;
  }
  Expected<bool> skip_string(const char* what) {
    auto length = integer(8, what);
    if (!length) return unexpected(length.error());
    return skip(*length, what);
  }
  Expected<bool> skip(std::uint64_t bytes, const char* what) {
    if (bytes > size_ - position_) return past_end(what);
    in_.seekg(static_cast<std::streamoff>(position_ + bytes));
    position_ += bytes;
    return true;
  }

  tl::unexpected<Status> past_end(const char* what) const {
    return invalid_argument(path_ + ": " + what + " at offset " + std::to_string(position_) +
                            " runs past the end of the file (" + std::to_string(size_) + " bytes)");
  }

 private:
  std::ifstream in_;
  std::string path_;
  std::uint64_t size_;
  std::uint64_t position_ = 0;
};

// Bytes of one scalar of a GGUF value type; 0 for strings and arrays; nullopt for no such type.
std::optional<unsigned> scalar_bytes(std::uint32_t type) {
  static constexpr unsigned kBytes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
  if (type >= std::size(kBytes)) return std::nullopt;
  return kBytes[type];
}

Expected<bool> skip_value(Reader& r, std::uint32_t type, const std::string& key, int depth) {
  const auto bytes = scalar_bytes(type);
  if (!bytes) return invalid_argument("metadata '" + key + "' has unknown value type " + std::to_string(type));
  if (type == kString) return r.skip_string("a string value");
  if (type != kArray) return r.skip(*bytes, "a value");
  if (depth > 0) return invalid_argument("metadata '" + key + "' nests arrays");
  auto element_type = r.integer(4, "an array's element type");
  auto count = element_type ? r.integer(8, "an array's length") : element_type;
  if (!count) return unexpected(count.error());
  const auto element_bytes = scalar_bytes(static_cast<std::uint32_t>(*element_type));
  if (!element_bytes) return invalid_argument("metadata '" + key + "' has unknown element type " + std::to_string(*element_type));
  if (*element_type != kString && *element_type != kArray) {
    if (*count > std::numeric_limits<std::uint64_t>::max() / *element_bytes) return r.past_end("an array");
    return r.skip(*count * *element_bytes, "an array");
  }
  for (std::uint64_t i = 0; i < *count; ++i) {
    if (auto ok = skip_value(r, static_cast<std::uint32_t>(*element_type), key, depth + 1); !ok) return ok;
  }
  return true;
}

}  // namespace

const GgufEntry* GgufLayout::find(const std::string& key) const {
  for (const GgufEntry& e : entries) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

Expected<GgufLayout> read_gguf_layout(const std::string& path) {
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return not_found(path + ": " + ec.message());
  Reader r(path, size);
  if (!r.open()) return io_error(path + ": cannot be opened");
  GgufLayout layout;
  layout.path = path;
  layout.file_size = size;
  auto magic = r.integer(4, "the GGUF magic");
  if (!magic) return unexpected(magic.error());
  if (*magic != 0x46554747u) return invalid_argument(path + ": not a GGUF file (no GGUF magic)");
  auto version = r.integer(4, "the version");
  if (!version) return unexpected(version.error());
  if (*version != 2 && *version != 3) {
    return unsupported(path + ": GGUF version " + std::to_string(*version) + " (2 and 3 are read)");
  }
  layout.version = static_cast<std::uint32_t>(*version);
  auto n_tensors = r.integer(8, "the tensor count");
  auto n_entries = n_tensors ? r.integer(8, "the metadata count") : n_tensors;
  if (!n_entries) return unexpected(n_entries.error());
  // Every entry and tensor takes at least 8 bytes: larger counts cannot fit in the file.
  if (*n_tensors > size / 8 || *n_entries > size / 8) {
    return invalid_argument(path + ": " + std::to_string(*n_tensors) + " tensors and " + std::to_string(*n_entries) +
                            " metadata entries cannot fit in " + std::to_string(size) + " bytes");
  }
  for (std::uint64_t i = 0; i < *n_entries; ++i) {
    GgufEntry e;
    e.begin = r.position();
    auto key = r.string("a metadata key", 65535);
    if (!key) return unexpected(key.error());
    e.key = std::move(*key);
    auto type = r.integer(4, "a metadata value type");
    if (!type) return unexpected(type.error());
    e.value_type = static_cast<std::uint32_t>(*type);
    e.value_begin = r.position();
    if (auto ok = skip_value(r, e.value_type, e.key, 0); !ok) return unexpected(ok.error().with_context(path));
    e.end = r.position();
    if (layout.find(e.key) != nullptr) return invalid_argument(path + ": metadata '" + e.key + "' appears twice");
    layout.entries.push_back(std::move(e));
  }
  if (const GgufEntry* a = layout.find("general.alignment")) {
    auto value = read_gguf_uint(layout, *a);
    if (!value) return unexpected(value.error());
    if (a->value_type != 4 || !*value || **value == 0 || **value > 65536 || (**value & (**value - 1)) != 0) {
      return invalid_argument(path + ": general.alignment must be a u32 power of two up to 65536");
    }
    layout.alignment = **value;
  }
  for (std::uint64_t i = 0; i < *n_tensors; ++i) {
    GgufTensor t;
    auto name = r.string("a tensor name", 63);  // ggml's names hold 63 bytes
    if (!name) return unexpected(name.error());
    t.name = std::move(*name);
    auto n_dims = r.integer(4, "a tensor's dimension count");
    if (!n_dims) return unexpected(n_dims.error());
    if (*n_dims == 0 || *n_dims > 4) {
      return invalid_argument(path + ": tensor '" + t.name + "' has " + std::to_string(*n_dims) + " dimensions (1 to 4)");
    }
    std::uint64_t elements = 1;
    for (std::uint64_t d = 0; d < *n_dims; ++d) {
      auto dim = r.integer(8, "a tensor dimension");
      if (!dim) return unexpected(dim.error());
      if (*dim == 0 || elements > std::numeric_limits<std::uint64_t>::max() / *dim) {
        return invalid_argument(path + ": tensor '" + t.name + "' has an empty or impossibly large shape");
      }
      elements *= *dim;
      t.dims.push_back(*dim);
    }
    auto type = r.integer(4, "a tensor type");
    auto offset = type ? r.integer(8, "a tensor offset") : type;
    if (!offset) return unexpected(offset.error());
    t.ggml_type = static_cast<std::uint32_t>(*type);
    t.offset = *offset;
    const auto lpx_type = from_ggml_type(t.ggml_type);
    if (!lpx_type) {
      const char* name_of = ggml_type_name(t.ggml_type);
      return unsupported(path + ": tensor '" + t.name + "' is of type " + (name_of ? name_of : std::to_string(t.ggml_type)) +
                         ", which LPX does not read");
    }
    const auto bytes = tensor_row_bytes(*lpx_type, elements);
    if (!bytes || t.dims[0] % tensor_type_traits(*lpx_type)->block_elements != 0) {
      return invalid_argument(path + ": tensor '" + t.name + "': rows of " + std::to_string(t.dims[0]) +
                              " elements are not whole blocks of its type");
    }
    t.bytes = *bytes;
    layout.tensors.push_back(std::move(t));
  }
  layout.data_start = (r.position() + layout.alignment - 1) / layout.alignment * layout.alignment;
  // As llama.cpp requires: each tensor where the one before it ends (padded), so that the data
  // section holds every tensor once; no name twice.
  std::uint64_t expected_offset = 0;
  std::vector<std::string> names;
  for (const GgufTensor& t : layout.tensors) {
    if (t.offset != expected_offset) {
      return invalid_argument(path + ": tensor '" + t.name + "' starts at data offset " + std::to_string(t.offset) +
                              ", not where the tensor before it ends (" + std::to_string(expected_offset) + ")");
    }
    expected_offset += (t.bytes + layout.alignment - 1) / layout.alignment * layout.alignment;
    names.push_back(t.name);
  }
  std::sort(names.begin(), names.end());
  if (const auto twice = std::adjacent_find(names.begin(), names.end()); twice != names.end()) {
    return invalid_argument(path + ": tensor '" + *twice + "' appears twice");
  }
  for (const GgufTensor& t : layout.tensors) {
    const bool inside = layout.data_start <= size && t.offset <= size - layout.data_start &&
                        t.bytes <= size - layout.data_start - t.offset;
    if (t.offset % layout.alignment != 0 || !inside) {
      return invalid_argument(path + ": tensor '" + t.name + "' offset " + std::to_string(t.offset) +
                              " (+" + std::to_string(t.bytes) + " bytes) is misaligned or past the end of the file");
    }
  }
  return layout;
}

namespace {

Expected<std::string> read_bytes(const GgufLayout& layout, std::uint64_t at, std::uint64_t n) {
  std::ifstream in(layout.path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(at));
  std::string bytes(n, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(n));
  if (!in) return io_error(layout.path + ": read failed at offset " + std::to_string(at));
  return bytes;
}

std::uint64_t little_endian(const std::string& bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) value |= std::uint64_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
  return value;
}

}  // namespace

Expected<std::optional<std::uint64_t>> read_gguf_uint(const GgufLayout& layout, const GgufEntry& entry) {
  static constexpr unsigned kUnsigned[] = {1, 0, 2, 0, 4, 0, 0, 0, 0, 0, 8};  // u8, u16, u32, u64
  if (entry.value_type >= std::size(kUnsigned) || kUnsigned[entry.value_type] == 0) {
    return std::optional<std::uint64_t>();
  }
  auto bytes = read_bytes(layout, entry.value_begin, kUnsigned[entry.value_type]);
  if (!bytes) return unexpected(bytes.error());
  return std::optional<std::uint64_t>(little_endian(*bytes));
}

Expected<std::optional<std::string>> read_gguf_string(const GgufLayout& layout, const GgufEntry& entry) {
  if (entry.value_type != kString) return std::optional<std::string>();
  auto bytes = read_bytes(layout, entry.value_begin + 8, entry.end - entry.value_begin - 8);
  if (!bytes) return unexpected(bytes.error());
  return std::optional<std::string>(std::move(*bytes));
}

}  // namespace lpx::core
