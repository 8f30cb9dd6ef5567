#include "safetensors_header.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string_view>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

namespace lpx::safetensors {
namespace {

namespace json = boost::json;
using Error = tl::unexpected<std::string>;

struct DtypeInfo {
  std::string_view name;
  Dtype dtype;
  std::uint32_t bytes;
};

constexpr DtypeInfo kDtypes[] = {
    {"BOOL", Dtype::boolean, 1}, {"U8", Dtype::u8, 1},       {"I8", Dtype::i8, 1},
    {"I16", Dtype::i16, 2},      {"U16", Dtype::u16, 2},     {"F16", Dtype::f16, 2},
    {"BF16", Dtype::bf16, 2},    {"I32", Dtype::i32, 4},     {"U32", Dtype::u32, 4},
    {"F32", Dtype::f32, 4},      {"F64", Dtype::f64, 8},     {"I64", Dtype::i64, 8},
    {"U64", Dtype::u64, 8},      {"F8_E4M3", Dtype::f8_e4m3, 1}, {"F8_E5M2", Dtype::f8_e5m2, 1}};

const DtypeInfo* find_dtype(std::string_view name) {
  for (const DtypeInfo& info : kDtypes) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

std::string quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text.substr(0, 80)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > 80) out += "...";
  return out + "'";
}

// A non-negative JSON integer, however Boost stored it.
bool non_negative_integer(const json::value& v, std::uint64_t& out) {
  if (v.is_uint64()) {
    out = v.get_uint64();
    return true;
  }
  if (v.is_int64() && v.get_int64() >= 0) {
    out = static_cast<std::uint64_t>(v.get_int64());
    return true;
  }
  return false;
}

tl::expected<TensorEntry, std::string> parse_entry(std::string_view name, const json::value& v,
                                                   const Limits& limits) {
  const std::string where = "tensor " + quoted(name) + ": ";
  if (name.empty()) return Error("a tensor has an empty name");
  if (name.size() > limits.max_tensor_name_bytes) {
    return Error(where + "name of " + std::to_string(name.size()) + " bytes is longer than " +
                 std::to_string(limits.max_tensor_name_bytes));
  }
  if (name.find('\0') != std::string_view::npos) return Error(where + "name holds a NUL byte");
  const json::object* fields = v.if_object();
  if (fields == nullptr) return Error(where + "should be an object with dtype, shape and data_offsets");
  const json::value* dtype = fields->if_contains("dtype");
  const json::value* shape = fields->if_contains("shape");
  const json::value* offsets = fields->if_contains("data_offsets");
  if (dtype == nullptr || shape == nullptr || offsets == nullptr) {
    return Error(where + "lacks " + (dtype == nullptr ? "dtype" : shape == nullptr ? "shape" : "data_offsets"));
  }
  TensorEntry entry;
  entry.name = std::string(name);
  if (!dtype->is_string()) return Error(where + "dtype should be a string");
  const DtypeInfo* info = find_dtype(std::string_view(dtype->get_string()));
  if (info == nullptr) return Error(where + "unknown dtype " + quoted(dtype->get_string()));
  entry.dtype = info->dtype;

  const json::array* dims = shape->if_array();
  if (dims == nullptr) return Error(where + "shape should be an array of sizes");
  if (dims->size() > 8) return Error(where + "shape has " + std::to_string(dims->size()) + " dimensions");
  std::uint64_t elements = 1;
  bool overflow = false;
  for (const json::value& d : *dims) {
    std::uint64_t n = 0;
    if (!non_negative_integer(d, n) || n > static_cast<std::uint64_t>(INT64_MAX)) {
      return Error(where + "shape holds " + json::serialize(d) + ", not a size");
    }
    entry.shape.push_back(static_cast<std::int64_t>(n));
    overflow = overflow || (n != 0 && elements > UINT64_MAX / n);
    if (!overflow) elements *= n;
  }
  // A zero dimension makes the tensor empty whatever the others say.
  if (std::find(entry.shape.begin(), entry.shape.end(), 0) != entry.shape.end()) {
    elements = 0;
    overflow = false;
  }
  if (overflow || elements > UINT64_MAX / info->bytes) {
    return Error(where + "shape " + json::serialize(*shape) + " has more bytes than a file can hold");
  }
  const std::uint64_t bytes = elements * info->bytes;

  const json::array* range = offsets->if_array();
  if (range == nullptr || range->size() != 2 || !non_negative_integer((*range)[0], entry.begin) ||
      !non_negative_integer((*range)[1], entry.end)) {
    return Error(where + "data_offsets should be [begin, end]");
  }
  if (entry.end < entry.begin || entry.end - entry.begin != bytes) {
    return Error(where + "data_offsets " + json::serialize(*offsets) + " do not hold the " +
                 std::to_string(bytes) + " bytes of " + info->name.data() + " " +
                 json::serialize(*shape));
  }
  return entry;
}

}  // namespace

const char* dtype_name(Dtype dtype) noexcept {
  for (const DtypeInfo& info : kDtypes) {
    if (info.dtype == dtype) return info.name.data();
  }
  return "?";
}

std::uint32_t dtype_bytes(Dtype dtype) noexcept {
  for (const DtypeInfo& info : kDtypes) {
    if (info.dtype == dtype) return info.bytes;
  }
  return 0;
}

tl::expected<SafetensorsHeader, std::string> parse_safetensors(const std::uint8_t* data,
                                                               std::uint64_t size,
                                                               const Limits& limits) {
  if (size < 8) {
    return Error("file of " + std::to_string(size) + " bytes is too short for a safetensors header");
  }
  std::uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = (header_bytes << 8) | data[i];
  if (header_bytes > limits.max_header_bytes) {
    return Error("header of " + std::to_string(header_bytes) + " bytes is larger than the " +
                 std::to_string(limits.max_header_bytes) + " the format allows");
  }
  if (header_bytes > size - 8) {
    return Error("header of " + std::to_string(header_bytes) + " bytes runs past the end of the file (" +
                 std::to_string(size) + " bytes)");
  }
  const std::string_view text(reinterpret_cast<const char*>(data + 8), header_bytes);
  if (text.empty() || text.front() != '{') return Error("header does not start with a JSON object");

  json::parse_options options;
  options.max_depth = limits.max_json_depth;
  boost::system::error_code error;
  const json::value root = json::parse(text, error, {}, options);
  if (error) return Error("header is not valid JSON: " + error.message());
  const json::object* object = root.if_object();
  if (object == nullptr) return Error("header is not a JSON object");
  if (object->size() > limits.max_tensors + 1) {
    return Error("header names " + std::to_string(object->size()) + " tensors, more than " +
                 std::to_string(limits.max_tensors));
  }

  SafetensorsHeader header;
  const std::uint64_t data_start = 8 + header_bytes;
  const std::uint64_t data_bytes = size - data_start;
  for (const auto& [key, value] : *object) {
    if (key == "__metadata__") {
      const json::object* metadata = value.if_object();
      if (metadata == nullptr) return Error("__metadata__ should be an object of strings");
      for (const auto& [name, text_value] : *metadata) {
        if (!text_value.is_string()) {
          return Error("__metadata__ " + quoted(name) + " should be a string");
        }
        header.metadata.emplace(std::string(name), std::string(text_value.get_string()));
      }
      continue;
    }
    auto entry = parse_entry(key, value, limits);
    if (!entry) return Error(entry.error());
    header.tensors.push_back(std::move(*entry));
  }

  // The ranges must tile the data: sorted by start, each begins where the previous ended.
  std::vector<std::size_t> order(header.tensors.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const TensorEntry& x = header.tensors[a];
    const TensorEntry& y = header.tensors[b];
    return x.begin != y.begin ? x.begin < y.begin : x.end < y.end;
  });
  std::uint64_t next = 0;
  for (const std::size_t index : order) {
    const TensorEntry& t = header.tensors[index];
    if (t.begin != next) {
      return Error("tensor " + quoted(t.name) + ": data_offsets start at " + std::to_string(t.begin) +
                   ", but the previous tensor ends at " + std::to_string(next) +
                   (t.begin < next ? " (overlap)" : " (gap)"));
    }
    next = t.end;
  }
  if (next != data_bytes) {
    return Error("tensors cover " + std::to_string(next) + " bytes of data, but the file holds " +
                 std::to_string(data_bytes) + " after the header");
  }
  for (TensorEntry& t : header.tensors) {
    t.begin += data_start;
    t.end += data_start;
  }
  return header;
}

}  // namespace lpx::safetensors
