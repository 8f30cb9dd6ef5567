#include "quantize/convert_model.hpp"

#include <cstring>
#include <limits>
#include <memory>

#include "lpx/cpp/tensor_types.hpp"
#include "quantize/convert_rows.hpp"
#include "quantize/gguf_writer.hpp"
#include "reference/quantize_weights.hpp"

namespace lpx::core {
namespace {

// Keys the output sets itself rather than copies: its alignment (32), and the type mix when it
// quantizes.
bool set_by_writer(const std::string& key, bool quantizes) {
  if (key == "general.alignment") return true;
  return quantizes && (key == "general.file_type" || key == "general.quantization_version");
}

Expected<bool> copy_entry(const ModelFile& model, const std::string& key, GgufWriter& out) {
  const auto value = model.find(key);
  if (!value) return invalid_argument("metadata '" + key + "' is listed but cannot be read");
  switch (value->type) {
    case LPX_VALUE_UINT:
      if (value->u <= std::numeric_limits<std::uint32_t>::max()) {
        out.add_u32(key, static_cast<std::uint32_t>(value->u));
      } else {
        out.add_u64(key, value->u);
      }
      return true;
    case LPX_VALUE_INT:
      if (value->i >= std::numeric_limits<std::int32_t>::min() && value->i <= std::numeric_limits<std::int32_t>::max()) {
        out.add_i32(key, static_cast<std::int32_t>(value->i));
      } else {
        out.add_i64(key, value->i);
      }
      return true;
    case LPX_VALUE_FLOAT: out.add_f32(key, static_cast<float>(value->f)); return true;
    case LPX_VALUE_BOOL: out.add_bool(key, value->u != 0); return true;
    case LPX_VALUE_STRING: out.add_string(key, std::string(value->string, value->length)); return true;
    case LPX_VALUE_ARRAY: break;
    default: return unsupported("metadata '" + key + "' has a type GGUF cannot hold");
  }
  std::vector<std::string> strings;
  std::vector<std::int32_t> ints;
  std::vector<float> floats;
  for (std::uint64_t k = 0; k < value->length; ++k) {
    auto element = model.array_element(key, k);
    if (!element) return unexpected(element.error());
    switch (value->element_type) {
      case LPX_VALUE_STRING: strings.emplace_back(element->string, element->length); break;
      case LPX_VALUE_FLOAT: floats.push_back(static_cast<float>(element->f)); break;
      case LPX_VALUE_INT: case LPX_VALUE_UINT: {
        const std::int64_t v = element->type == LPX_VALUE_INT ? element->i : static_cast<std::int64_t>(element->u);
        if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max() ||
            (element->type == LPX_VALUE_UINT && element->u > std::numeric_limits<std::int32_t>::max())) {
          return unsupported("metadata '" + key + "'[" + std::to_string(k) + "] does not fit in an i32");
        }
        ints.push_back(static_cast<std::int32_t>(v));
        break;
      }
      default: return unsupported("metadata '" + key + "' is an array of arrays or bools");
    }
  }
  if (value->element_type == LPX_VALUE_STRING) out.add_strings(key, strings);
  else if (value->element_type == LPX_VALUE_FLOAT) out.add_f32s(key, floats);
  else out.add_i32s(key, ints);
  return true;
}

}  // namespace

Expected<QuantizeSummary> convert_model(const ModelFile& model, const std::string& output,
                                        const ConvertOptions& options) {
  auto keys = model.metadata_keys();
  if (!keys) return unexpected(keys.error());
  GgufWriter out;
  for (const std::string& key : *keys) {
    if (set_by_writer(key, options.mix.has_value())) continue;
    if (auto copied = copy_entry(model, key, out); !copied) return unexpected(copied.error().with_context(model.path()));
  }

  // Which type each tensor gets, and in what order: llama-quantize's plan, or the model's own.
  std::vector<TensorToQuantize> tensors;
  for (const lpx_tensor_view& t : model.tensors()) {
    if (tensor_type_traits(t.type) == nullptr) return invalid_argument(model.path() + ": tensor '" + t.name + "' has no GGUF type");
    tensors.push_back({t.name, static_cast<lpx_tensor_type>(t.type), std::vector<std::int64_t>(t.dims, t.dims + t.n_dims)});
  }
  std::vector<PlannedTensor> plan;
  if (options.mix) {
    auto arch = model.get_string("general.architecture");
    if (!arch) return unexpected(arch.error().with_context(model.path()));
    auto layers = model.get_uint(*arch + ".block_count");
    if (!layers) return unexpected(layers.error().with_context(model.path()));
    plan = plan_quantization(tensors, static_cast<std::uint32_t>(*layers), *options.mix, options.pure);
    out.add_u32("general.quantization_version", 2);
    out.add_u32("general.file_type", quant_mix_file_type(*options.mix));
  } else {
    for (std::size_t i = 0; i < tensors.size(); ++i) plan.push_back({i, tensors[i].type});
  }

  const unsigned threads = conversion_threads(options.threads);
  auto progress = std::make_shared<QuantizeProgress>();
  progress->tensors = plan.size();
  auto scratch = std::make_shared<ConvertScratch>();
  QuantizeSummary summary;
  summary.tensors = plan.size();
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const PlannedTensor& p = plan[i];
    const lpx_tensor_view& view = model.tensors()[p.input_index];
    const auto from = static_cast<lpx_tensor_type>(view.type);
    if (p.type != from && !kernels::reference::can_quantize_weights(p.type)) {
      return unsupported(std::string("converting to ") + tensor_type_traits(p.type)->name + " is not supported");
    }
    const auto columns = static_cast<std::uint64_t>(view.dims[0]);
    const std::uint64_t in_row = *tensor_row_bytes(from, columns);
    const auto out_row = tensor_row_bytes(p.type, columns);
    if (!out_row) return invalid_argument(model.path() + ": tensor '" + std::string(view.name) + "' rows do not fit its type");
    std::vector<std::uint64_t> dims(view.dims, view.dims + view.n_dims);
    const std::string name = view.name;
    const bool convert = p.type != from;
    summary.converted += convert ? 1 : 0;
    progress->bytes_total += (view.size_bytes / in_row) * *out_row;
    const auto* data = static_cast<const std::uint8_t*>(view.data);
    const std::string& path = model.path();
    out.add_checked_tensor(
        name, tensor_type_traits(p.type)->ggml_type, dims, *out_row,
        [=, &options, &path](std::uint64_t first, std::uint64_t n, std::uint8_t* to) -> Expected<bool> {
          if (options.stop != nullptr && options.stop->load()) {
            return fail(LPX_ERR_CANCELLED, "stopped before the end; " + output + " was not written");
          }
          if (convert) {
            auto done = convert_rows(from, data + first * in_row, p.type, to, n, columns, threads, name, *scratch);
            if (!done) return unexpected(std::move(done).error().with_context(path));
          } else {
            std::memcpy(to, data + first * in_row, n * in_row);
          }
          progress->tensor = i + 1;
          progress->name = &name;
          progress->from = from;
          progress->to = p.type;
          progress->bytes_done += n * *out_row;
          if (options.on_progress) options.on_progress(*progress);
          return true;
        });
  }
  auto written = out.write(output);
  if (!written) return unexpected(written.error());
  summary.input_bytes = 0;
  for (const lpx_tensor_view& t : model.tensors()) summary.input_bytes += t.size_bytes;
  summary.output_bytes = *written;
  return summary;
}

}  // namespace lpx::core
