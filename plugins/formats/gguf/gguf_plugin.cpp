// gguf: the model-format plugin for GGUF v2/v3 files (the llama.cpp / Ollama ecosystem).
// The file is memory-mapped and validated completely on open; tensors are views into the mapping.
#include <cstring>

#include <lpx/cpp/plugin.hpp>

#include "gguf_parser.hpp"
#include "mapped_file.hpp"

namespace {

using lpx::gguf::GgufFile;
using lpx::gguf::ValueType;

lpx_value_type to_lpx(ValueType type) {
  switch (type) {
    case ValueType::uint8: case ValueType::uint16: case ValueType::uint32: case ValueType::uint64:
      return LPX_VALUE_UINT;
    case ValueType::int8: case ValueType::int16: case ValueType::int32: case ValueType::int64:
      return LPX_VALUE_INT;
    case ValueType::float32: case ValueType::float64: return LPX_VALUE_FLOAT;
    case ValueType::boolean: return LPX_VALUE_BOOL;
    case ValueType::string: return LPX_VALUE_STRING;
    case ValueType::array: break;
  }
  return LPX_VALUE_ARRAY;
}

class GgufModel final : public lpx::Model {
 public:
  GgufModel(lpx::formats::MappedFile mapping, GgufFile file)
      : mapping_(std::move(mapping)), file_(std::move(file)) {
    // Tensor names are not NUL-terminated in the file: keep terminated copies for the views.
    names_.reserve(file_.tensors.size());
    for (const lpx::gguf::Tensor& t : file_.tensors) names_.emplace_back(t.name);
    // Keys are not NUL-terminated either.
    keys_.reserve(file_.metadata.size());
    for (const auto& entry : file_.metadata) keys_.emplace_back(entry.first);
    for (const std::string& key : keys_) key_pointers_.push_back(key.c_str());
  }

  const std::vector<const char*>& metadata_keys() const override { return key_pointers_; }

  std::optional<lpx_metadata_value> find(const char* key) const override {
    const lpx::gguf::Value* value = file_.find(key);
    if (value == nullptr) return std::nullopt;
    return convert(*value);
  }

  lpx_metadata_value array_element(const char* key, std::uint64_t index) const override {
    const lpx::gguf::Value* value = file_.find(key);
    if (value == nullptr) throw lpx::Error(LPX_ERR_NOT_FOUND, std::string("no metadata key '") + key + "'");
    if (value->type != ValueType::array) {
      throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, std::string("metadata '") + key + "' is not an array");
    }
    const lpx::gguf::Array& array = file_.arrays[value->array];
    if (index >= array.count) {
      throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, std::string("metadata '") + key + "' has " +
                                                     std::to_string(array.count) + " elements, no " +
                                                     std::to_string(index));
    }
    return convert(file_.element(array, index));
  }

  std::uint64_t tensor_count() const noexcept override { return file_.tensors.size(); }

  lpx_tensor_view tensor(std::uint64_t index) const override {
    if (index >= file_.tensors.size()) {
      throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "no tensor " + std::to_string(index));
    }
    const lpx::gguf::Tensor& t = file_.tensors[index];
    lpx_tensor_view view{};
    view.name = names_[index].c_str();
    view.type = t.type;
    view.n_dims = t.n_dims;
    for (std::uint32_t d = 0; d < LPX_TENSOR_MAX_DIMS; ++d) view.dims[d] = t.dims[d];
    view.data = mapping_.data() + t.offset;
    view.size_bytes = t.size;
    return view;
  }

 private:
  lpx_metadata_value convert(const lpx::gguf::Value& value) const {
    lpx_metadata_value out{};
    out.type = to_lpx(value.type);
    out.u = value.u;
    out.i = value.i;
    out.f = value.f;
    if (value.type == ValueType::string) {
      out.string = value.string.data();
      out.length = value.string.size();
    } else if (value.type == ValueType::array) {
      const lpx::gguf::Array& array = file_.arrays[value.array];
      out.length = array.count;
      out.element_type = to_lpx(array.element_type);
    }
    return out;
  }

  lpx::formats::MappedFile mapping_;
  GgufFile file_;
  std::vector<std::string> names_;
  std::vector<std::string> keys_;
  std::vector<const char*> key_pointers_;
};

class GgufFormat final : public lpx::ModelFormat {
 public:
  explicit GgufFormat(const lpx::Options&) {}

  std::int32_t probe(const std::uint8_t* head, std::size_t length) const noexcept override {
    return length >= 4 && std::memcmp(head, "GGUF", 4) == 0 ? 100 : 0;
  }

  std::unique_ptr<lpx::Model> open(const char* path) override {
    auto mapping = lpx::formats::MappedFile::open(path);
    if (!mapping) throw lpx::Error(LPX_ERR_IO, mapping.error());
    auto file = lpx::gguf::parse_gguf(mapping->data(), mapping->size());
    if (!file) throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, file.error());
    return std::make_unique<GgufModel>(std::move(*mapping), std::move(*file));
  }
};

constexpr const char* kCapabilities[] = {"format:gguf", "gguf:v2", "gguf:v3"};

}  // namespace

LPX_PLUGIN_ENTRY() {
  return lpx::describe<GgufFormat>({.name = "gguf",
                                    .version = "1.0.0",
                                    .license = "Apache-2.0",
                                    .description = "GGUF v2/v3 model files, memory-mapped and validated",
                                    .options = {},
                                    .capabilities = kCapabilities});
}
