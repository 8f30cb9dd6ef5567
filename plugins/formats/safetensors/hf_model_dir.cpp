#include "hf_model_dir.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "half_float.hpp"
#include "hf_config.hpp"
#include "hf_tensor_names.hpp"
#include "hf_tokenizer.hpp"
#include "safetensors_header.hpp"

namespace lpx::safetensors {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using Error = tl::unexpected<std::string>;

constexpr const char* kIndex = "model.safetensors.index.json";
constexpr const char* kSingle = "model.safetensors";

tl::expected<std::string, std::string> read_text(const fs::path& path, std::uint64_t limit) {
  std::error_code error;
  const std::uint64_t size = fs::file_size(path, error);
  if (error) return Error(path.filename().string() + ": cannot read: " + error.message());
  if (size > limit) {
    return Error(path.filename().string() + ": " + std::to_string(size) + " bytes, more than the " +
                 std::to_string(limit) + " such a file may have");
  }
  std::ifstream in(path, std::ios::binary);
  std::string text(static_cast<std::size_t>(size), '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(size))) {
    return Error(path.filename().string() + ": cannot read");
  }
  return text;
}

tl::expected<json::object, std::string> read_json_object(const fs::path& path, std::uint64_t limit,
                                                         const Limits& limits) {
  auto text = read_text(path, limit);
  if (!text) return Error(text.error());
  json::parse_options options;
  options.max_depth = limits.max_json_depth;
  boost::system::error_code error;
  json::value value = json::parse(*text, error, {}, options);
  if (error) return Error(path.filename().string() + ": not valid JSON: " + error.message());
  if (!value.is_object()) return Error(path.filename().string() + ": should hold a JSON object");
  return std::move(value.get_object());
}

fs::path model_dir(const std::string& path) {
  std::error_code error;
  if (fs::is_directory(path, error)) return fs::path(path);
  return fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
}

// The shard files in the order the index first names them, and which file holds each tensor.
struct WeightFiles {
  std::vector<std::string> files;
  std::map<std::string, std::string> tensor_file;  // empty without an index
};

tl::expected<WeightFiles, std::string> weight_files(const fs::path& dir, const Limits& limits) {
  WeightFiles out;
  std::error_code error;
  if (!fs::exists(dir / kIndex, error)) {
    if (!fs::exists(dir / kSingle, error)) {
      return Error(std::string("no weights: neither ") + kSingle + " nor " + kIndex);
    }
    out.files.emplace_back(kSingle);
    return out;
  }
  const std::string where = kIndex;
  auto index = read_json_object(dir / kIndex, limits.max_config_bytes, limits);
  if (!index) return Error(index.error());
  const json::value* map = index->if_contains("weight_map");
  if (map == nullptr || !map->is_object()) return Error(where + ": no 'weight_map' object");
  std::set<std::string> seen;
  for (const auto& [tensor, file] : map->get_object()) {
    if (!file.is_string()) return Error(where + ": the file of tensor '" + std::string(tensor) + "' is not a name");
    const std::string name(file.get_string());
    // Shards live in the directory itself: a name is a plain file name, never a path.
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == ".." ||
        name.find('\0') != std::string::npos) {
      return Error(where + ": shard '" + name + "' is not a file name in the model's directory");
    }
    out.tensor_file.emplace(std::string(tensor), name);
    if (seen.insert(name).second) out.files.push_back(name);
  }
  if (out.files.empty()) return Error(where + ": 'weight_map' names no tensor");
  if (out.files.size() > limits.max_shards) {
    return Error(where + ": " + std::to_string(out.files.size()) + " shards, more than " +
                 std::to_string(limits.max_shards));
  }
  return out;
}

lpx_tensor_type lpx_type(Dtype dtype) {
  switch (dtype) {
    case Dtype::f16: return LPX_TENSOR_F16;
    case Dtype::bf16: return LPX_TENSOR_BF16;
    default: return LPX_TENSOR_F32;
  }
}

// Reorders the rows of a q or k projection from Hugging Face's rope layout (each head's first
// half, then its second) to GGUF's (adjacent pairs): new row 2j + i of a head is old row
// i * (rows_per_head / 2) + j.
void permute_rows(const std::uint8_t* src, std::uint8_t* dst, std::uint64_t rows,
                  std::uint64_t row_bytes, std::uint64_t heads) {
  const std::uint64_t per_head = rows / heads;
  const std::uint64_t half = per_head / 2;
  for (std::uint64_t h = 0; h < heads; ++h) {
    for (std::uint64_t j = 0; j < half; ++j) {
      for (std::uint64_t i = 0; i < 2; ++i) {
        const std::uint64_t from = h * per_head + i * half + j;
        const std::uint64_t to = h * per_head + 2 * j + i;
        std::memcpy(dst + to * row_bytes, src + from * row_bytes, row_bytes);
      }
    }
  }
}

std::vector<std::uint8_t> to_f32(const std::uint8_t* src, std::uint64_t count, Dtype dtype, float add) {
  std::vector<std::uint8_t> out(count * sizeof(float));
  for (std::uint64_t k = 0; k < count; ++k) {
    float value;
    if (dtype == Dtype::f32) {
      std::memcpy(&value, src + 4 * k, 4);
    } else {
      std::uint16_t bits;
      std::memcpy(&bits, src + 2 * k, 2);
      value = dtype == Dtype::bf16 ? bf16_to_float(bits) : f16_to_float(bits);
    }
    value += add;
    std::memcpy(out.data() + 4 * k, &value, 4);
  }
  return out;
}

// The model's name as users know it: its directory's ("SmolLM2-135M-Instruct").
std::string directory_name(const fs::path& dir) {
  fs::path normal = fs::absolute(dir).lexically_normal();
  if (normal.filename().empty()) normal = normal.parent_path();  // "dir/" ends in an empty name
  return normal.filename().string();
}

}  // namespace

bool looks_like_hf_model(const std::string& path) {
  std::error_code error;
  const fs::path dir = model_dir(path);
  if (!fs::is_regular_file(dir / "config.json", error)) return false;
  const bool single = fs::is_regular_file(dir / kSingle, error);
  const bool sharded = fs::is_regular_file(dir / kIndex, error);
  if (fs::is_directory(path, error)) return single || sharded;
  // A file of the directory: only one that open() loads (model.safetensors, or a shard).
  const std::string name = fs::path(path).filename().string();
  return fs::path(path).extension() == ".safetensors" &&
         ((single && name == kSingle) || (sharded && name.rfind("model-", 0) == 0));
}

tl::expected<std::unique_ptr<HfModelDir>, std::string> HfModelDir::open(const std::string& path,
                                                                         const Limits& limits) {
  const fs::path dir = model_dir(path);
  std::unique_ptr<HfModelDir> model(new HfModelDir());
  MetadataTable& meta = model->metadata_;

  auto config = read_json_object(dir / "config.json", limits.max_config_bytes, limits);
  if (!config) return Error(config.error());
  auto arch = read_hf_config(*config, meta);
  if (!arch) return Error(arch.error());
  meta.set_string("general.name", directory_name(dir));

  std::error_code error;
  std::optional<json::object> tokenizer_config;
  if (fs::exists(dir / "tokenizer_config.json", error)) {
    auto read = read_json_object(dir / "tokenizer_config.json", limits.max_config_bytes, limits);
    if (!read) return Error(read.error());
    tokenizer_config = std::move(*read);
  }
  if (fs::exists(dir / "tokenizer.json", error)) {
    auto tokenizer = read_json_object(dir / "tokenizer.json", limits.max_tokenizer_bytes, limits);
    if (!tokenizer) return Error(tokenizer.error());
    auto read = read_hf_tokenizer(*tokenizer, tokenizer_config ? &*tokenizer_config : nullptr, &*config, meta);
    if (!read) return Error(read.error());
  }
  // The chat template: transformers 4.43+ saves it as chat_template.jinja, older versions inside
  // tokenizer_config.json (a string, or named templates of which "default" is the chat one).
  if (fs::exists(dir / "chat_template.jinja", error)) {
    auto text = read_text(dir / "chat_template.jinja", limits.max_config_bytes);
    if (!text) return Error(text.error());
    meta.set_string("tokenizer.chat_template", std::move(*text));
  } else if (tokenizer_config) {
    const json::value* t = tokenizer_config->if_contains("chat_template");
    if (t != nullptr && t->is_string()) {
      meta.set_string("tokenizer.chat_template", std::string(t->get_string()));
    } else if (t != nullptr && t->is_array()) {
      for (const json::value& named : t->get_array()) {
        const json::object* o = named.if_object();
        if (o != nullptr && o->if_contains("name") != nullptr && o->at("name") == "default" &&
            o->if_contains("template") != nullptr && o->at("template").is_string()) {
          meta.set_string("tokenizer.chat_template", std::string(o->at("template").get_string()));
        }
      }
    } else if (t != nullptr && !t->is_null()) {
      return Error("tokenizer_config.json: 'chat_template' should be a string");
    }
  }

  auto files = weight_files(dir, limits);
  if (!files) return Error(files.error());
  std::set<std::string> gguf_names;
  std::uint64_t listed = 0;
  for (const std::string& file : files->files) {
    const std::string& where = file;
    auto mapping = formats::MappedFile::open((dir / file).string());
    if (!mapping) return Error(where + ": " + mapping.error());
    auto header = parse_safetensors(mapping->data(), mapping->size(), limits);
    if (!header) return Error(where + ": " + header.error());
    const std::uint8_t* base = mapping->data();
    model->shards_.push_back(std::move(*mapping));
    for (const TensorEntry& t : header->tensors) {
      const std::string at = where + ": tensor '" + t.name + "'";
      if (!files->tensor_file.empty()) {
        auto listed_in = files->tensor_file.find(t.name);
        if (listed_in == files->tensor_file.end() || listed_in->second != file) {
          return Error(at + " is not listed in " + kIndex + " as being in this file");
        }
        ++listed;
      }
      auto mapped = map_tensor_name(t.name, *arch);
      if (!mapped) return Error(at + " is not a tensor of a " + arch->name + " model");
      if (mapped->role == TensorRole::skipped) continue;
      if (t.dtype != Dtype::f32 && t.dtype != Dtype::f16 && t.dtype != Dtype::bf16) {
        return Error(at + " is " + dtype_name(t.dtype) + "; LPX reads F32, F16 and BF16 weights");
      }
      if (t.shape.empty() || t.shape.size() > LPX_TENSOR_MAX_DIMS) {
        return Error(at + " has " + std::to_string(t.shape.size()) + " dimensions; LPX reads 1 to " +
                     std::to_string(LPX_TENSOR_MAX_DIMS));
      }
      for (const std::int64_t d : t.shape) {
        if (d == 0) return Error(at + " has a dimension of size 0");
      }
      if (!gguf_names.insert(mapped->gguf).second) return Error(at + " is given twice");

      lpx_tensor_view view{};
      view.type = lpx_type(t.dtype);
      view.n_dims = static_cast<std::uint32_t>(t.shape.size());
      for (std::size_t d = 0; d < t.shape.size(); ++d) view.dims[d] = t.shape[t.shape.size() - 1 - d];
      view.data = base + t.begin;
      view.size_bytes = t.end - t.begin;

      const bool permute = arch->permute_qk && (mapped->role == TensorRole::query || mapped->role == TensorRole::key);
      const bool one_dim = t.shape.size() == 1;
      if (permute || (one_dim && t.dtype != Dtype::f32) || (mapped->role == TensorRole::norm && arch->norms_add_one)) {
        const std::uint8_t* src = base + t.begin;
        std::vector<std::uint8_t> bytes;
        if (permute) {
          const std::uint64_t heads = mapped->role == TensorRole::query ? arch->n_head : arch->n_head_kv;
          const auto rows = static_cast<std::uint64_t>(t.shape[0]);
          if (heads == 0 || rows % heads != 0 || (rows / heads) % 2 != 0) {
            return Error(at + ": " + std::to_string(rows) + " rows do not split into " +
                         std::to_string(heads) + " heads of an even size");
          }
          bytes.resize(view.size_bytes);
          permute_rows(src, bytes.data(), rows, rows == 0 ? 0 : view.size_bytes / rows, heads);
          src = bytes.data();
        }
        if (one_dim) {
          const float add = mapped->role == TensorRole::norm && arch->norms_add_one ? 1.0f : 0.0f;
          bytes = to_f32(src, static_cast<std::uint64_t>(t.shape[0]), t.dtype, add);
          view.type = LPX_TENSOR_F32;
        } else if (mapped->role == TensorRole::norm && arch->norms_add_one) {
          return Error(at + ": a norm weight should have one dimension");
        }
        view.size_bytes = bytes.size();
        model->buffers_.push_back(std::move(bytes));
        view.data = model->buffers_.back().data();
      }
      model->names_.push_back(mapped->gguf);
      model->views_.push_back(view);
    }
  }
  for (auto& [name, values] : arch->extra_tensors) {  // from config.json
    if (!gguf_names.insert(name).second) return Error("config.json: tensor '" + name + "' is in the weights too");
    std::vector<std::uint8_t> bytes(values.size() * sizeof(float));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    lpx_tensor_view view{};
    view.type = LPX_TENSOR_F32;
    view.n_dims = 1;
    view.dims[0] = static_cast<std::int64_t>(values.size());
    view.size_bytes = bytes.size();
    model->buffers_.push_back(std::move(bytes));
    view.data = model->buffers_.back().data();
    model->names_.push_back(name);
    model->views_.push_back(view);
  }
  if (!files->tensor_file.empty() && listed != files->tensor_file.size()) {
 return Error(std::string(kIndex) + ": names " + std::to_string(files->tensor_file.size()) +
                 " tensors, the shards hold " + std::to_string(listed) + " of them");
  }
  for (std::size_t k = 0; k < model->views_.size(); ++k) model->views_[k].name = model->names_[k].c_str();
  return model;
}

}  // namespace lpx::safetensors
