#include "quantize/quantize_model.hpp"

#include <algorithm>
#include <cmath>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "lpx/cpp/tensor_types.hpp"
#include "quantize/gguf_layout.hpp"
#include "quantize/convert_rows.hpp"
#include "reference/quantize_weights.hpp"
#include "util/remove_unless_kept.hpp"

namespace lpx::core {
namespace {

constexpr std::uint64_t kSlabElements = std::uint64_t{1} << 22;  // 16 MiB of f32 per slab

void put(std::string& out, std::uint64_t value, unsigned bytes) {
  for (unsigned i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFF);
}

void put_string(std::string& out, const std::string& s) {
  put(out, s.size(), 8);
  out += s;
}

void put_u32_entry(std::string& out, const std::string& key, std::uint32_t value) {
  put_string(out, key);
  put(out, 4, 4);  // GGUF's u32
  put(out, value, 4);
}

std::uint64_t aligned(std::uint64_t n, std::uint64_t alignment) { return (n + alignment - 1) / alignment * alignment; }

bool is_float(lpx_tensor_type t) { return t == LPX_TENSOR_F32 || t == LPX_TENSOR_F16 || t == LPX_TENSOR_BF16; }

std::string type_name(lpx_tensor_type t) { return tensor_type_traits(t)->name; }

}  // namespace

Expected<QuantizeSummary> quantize_model(const std::string& input, const std::string& output,
                                         const QuantizeOptions& options) {
  std::error_code ec;
  const std::string partial = output + ".partial";
  for (const std::string& target : {output, partial}) {
    if (std::filesystem::exists(target, ec) && std::filesystem::equivalent(input, target, ec)) {
      return invalid_argument(target + ": writing it would overwrite the input");
    }
  }
  auto layout = read_gguf_layout(input);
  if (!layout) return unexpected(layout.error());
  if (const GgufEntry* split = layout->find("split.count")) {
    auto count = read_gguf_uint(*layout, *split);
    if (!count) return unexpected(count.error());
    if (count->value_or(1) > 1) {
      return unsupported(input + ": one shard of a split model (split.count = " + std::to_string(**count) +
                         "); merge it first (llama-gguf-split --merge)");
    }
  }
  // llama-quantize pads its output to 32 bytes whatever general.alignment says, so it would
  // write a file that contradicts itself.
  if (layout->alignment != 32) {
    return unsupported(input + ": general.alignment = " + std::to_string(layout->alignment) +
                       "; quantize reads files aligned to 32 bytes, as llama-quantize writes them");
  }
  std::vector<TensorToQuantize> tensors;
  for (const GgufTensor& t : layout->tensors) {
    tensors.push_back({t.name, *from_ggml_type(t.ggml_type), {t.dims.begin(), t.dims.end()}});
  }
  // The mixes pick layers by their place among the model's blocks: the count must be known.
  const GgufEntry* arch = layout->find("general.architecture");
  auto arch_name = arch ? read_gguf_string(*layout, *arch) : Expected<std::optional<std::string>>(std::nullopt);
  if (!arch_name) return unexpected(arch_name.error());
  if (!*arch_name) return invalid_argument(input + ": no general.architecture string");
  if (**arch_name == "falcon") {
    return unsupported(input + ": falcon has rules of its own in llama-quantize that quantize does not follow");
  }
  const GgufEntry* count = layout->find(**arch_name + ".block_count");
  auto layers_read = count ? read_gguf_uint(*layout, *count) : Expected<std::optional<std::uint64_t>>(std::nullopt);
  if (!layers_read) return unexpected(layers_read.error());
  if (!*layers_read || count->value_type != 4 || **layers_read == 0) {
    return invalid_argument(input + ": no " + **arch_name + ".block_count (a u32 above 0)");
  }
  const auto layers = static_cast<std::uint32_t>(**layers_read);
  const std::vector<PlannedTensor> plan = plan_quantization(tensors, layers, options.mix, options.pure);
  for (const PlannedTensor& p : plan) {
    const TensorToQuantize& t = tensors[p.input_index];
    if (p.type != t.type && !is_float(t.type) && !options.allow_requantize) {
      return invalid_argument(input + ": tensor '" + t.name + "' is " + type_name(t.type) + " already; converting it to " +
                              type_name(p.type) + " requantizes, which loses quality: quantize the F16/BF16/F32 model, or "
                              "pass --allow-requantize");
    }
    if (p.type != t.type && !kernels::reference::can_quantize_weights(p.type)) {
      return unsupported(std::string("quantizing to ") + type_name(p.type) + " is not supported");
    }
  }

  // Metadata as the input has it, with the two keys llama-quantize sets moved to the end.
  std::ifstream in(input, std::ios::binary);
  if (!in) return io_error(input + ": cannot be opened");
  std::string header = "GGUF";
  put(header, 3, 4);
  put(header, plan.size(), 8);
  std::vector<const GgufEntry*> kept;
  for (const GgufEntry& e : layout->entries) {
    if (e.key != "general.quantization_version" && e.key != "general.file_type" && e.key != "split.no" &&
        e.key != "split.count" && e.key != "split.tensors.count") {
      kept.push_back(&e);
    }
  }
  put(header, kept.size() + 2, 8);
  for (const GgufEntry* e : kept) {
    std::string bytes(e->end - e->begin, '\0');
    in.seekg(static_cast<std::streamoff>(e->begin));
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!in) return io_error(input + ": read failed in metadata '" + e->key + "'");
    header += bytes;
  }
  put_u32_entry(header, "general.quantization_version", 2);
  put_u32_entry(header, "general.file_type", quant_mix_file_type(options.mix));
  std::uint64_t offset = 0, total = 0;
  std::vector<std::uint64_t> sizes;
  for (const PlannedTensor& p : plan) {
    const GgufTensor& t = layout->tensors[p.input_index];
    std::size_t n_dims = t.dims.size();
    while (n_dims > 1 && t.dims[n_dims - 1] == 1) --n_dims;  // as ggml counts dimensions
    put_string(header, t.name);
    put(header, n_dims, 4);
    std::uint64_t elements = 1;
    for (std::size_t d = 0; d < n_dims; ++d) {
      put(header, t.dims[d], 8);
      elements *= t.dims[d];
    }
    put(header, tensor_type_traits(p.type)->ggml_type, 4);
    put(header, offset, 8);
    sizes.push_back(*tensor_row_bytes(p.type, elements));
    offset += aligned(sizes.back(), layout->alignment);
    total += sizes.back();
  }
  header.resize(aligned(header.size(), layout->alignment), '\0');

  std::ofstream out(partial, std::ios::binary | std::ios::trunc);
  if (!out) return io_error(partial + ": cannot be created");
  RemoveUnlessKept cleanup(partial);  // a run that fails leaves nothing behind
  out.write(header.data(), static_cast<std::streamsize>(header.size()));

  const unsigned threads = conversion_threads(options.threads);
  QuantizeSummary summary;
  summary.tensors = plan.size();
  QuantizeProgress progress;
  progress.tensors = plan.size();
  progress.bytes_total = total;
  std::vector<char> source;
  ConvertScratch scratch;
  std::vector<std::uint8_t> converted;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const PlannedTensor& p = plan[i];
    const GgufTensor& t = layout->tensors[p.input_index];
    const lpx_tensor_type from = tensors[p.input_index].type;
    const std::uint64_t columns = t.dims[0];
    const std::uint64_t rows = t.bytes / *tensor_row_bytes(from, columns);
    const std::uint64_t in_row = *tensor_row_bytes(from, columns), out_row = *tensor_row_bytes(p.type, columns);
    const std::uint64_t slab_rows = std::max<std::uint64_t>(1, kSlabElements / columns);
    progress.tensor = i + 1;
    progress.name = &t.name;
    progress.from = from;
    progress.to = p.type;
    in.seekg(static_cast<std::streamoff>(layout->data_start + t.offset));
    for (std::uint64_t first = 0; first < rows; first += slab_rows) {
      const std::uint64_t n = std::min(slab_rows, rows - first);
      source.resize(n * in_row);
      in.read(source.data(), static_cast<std::streamsize>(source.size()));
      if (!in) return io_error(input + ": read failed in tensor '" + t.name + "'");
      if (p.type == from) {
        out.write(source.data(), static_cast<std::streamsize>(source.size()));
      } else {
        converted.resize(n * out_row);
        auto done = convert_rows(from, source.data(), p.type, converted.data(), n, columns, threads, t.name, scratch);
        if (!done) return unexpected(std::move(done).error().with_context(input));
        out.write(reinterpret_cast<const char*>(converted.data()), static_cast<std::streamsize>(converted.size()));
      }
      progress.bytes_done += n * out_row;
      if (options.on_progress) options.on_progress(progress);
      if (options.stop != nullptr && options.stop->load()) {
        return fail(LPX_ERR_CANCELLED, "stopped before the end; " + output + " was not written");
      }
    }
    const std::uint64_t padding = aligned(sizes[i], layout->alignment) - sizes[i];
    for (std::uint64_t k = 0; k < padding; ++k) out.put('\0');
    summary.converted += p.type != from ? 1 : 0;
  }
  out.close();
  if (!out) return io_error(partial + ": write failed (disk full?)");
  std::filesystem::rename(partial, output, ec);
  if (ec) return io_error(output + ": " + ec.message());
  cleanup.keep();
  summary.input_bytes = layout->file_size;
  summary.output_bytes = std::filesystem::file_size(output, ec);
  return summary;
}

}  // namespace lpx::core
