#include "synth/synthetic_model.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <system_error>
#include <unistd.h>

#include "model/rope_scaling.hpp"
#include "quantize/gguf_writer.hpp"
#include "synth/random_blocks.hpp"
#include "synth/synthetic_vocabulary.hpp"

namespace lpx::core::synth {
namespace {

// Part of the cached file's name: raised whenever the bytes written for a NAME:TYPE change (v2:
// the quantized head of llama-quantize; v3: norm weights and biases that differ per tensor; v4:
// Llama 3's rope_freqs.weight), so a file cached by an older build is never reused.
constexpr const char* kLayoutVersion = "v4";

struct TypeName {
  const char* name;
  lpx_tensor_type type;
};
constexpr TypeName kTypes[] = {{"F16", LPX_TENSOR_F16},   {"BF16", LPX_TENSOR_BF16},
                               {"Q8_0", LPX_TENSOR_Q8_0}, {"Q4_0", LPX_TENSOR_Q4_0},
                               {"Q4_1", LPX_TENSOR_Q4_1}, {"Q4_K", LPX_TENSOR_Q4_K}};

// GGUF file_type ids (llama.cpp's LLAMA_FTYPE_MOSTLY_*).
std::uint32_t file_type(lpx_tensor_type type) {
  switch (type) {
    case LPX_TENSOR_F16: return 1;
    case LPX_TENSOR_Q4_0: return 2;
    case LPX_TENSOR_Q4_1: return 3;
    case LPX_TENSOR_Q8_0: return 7;
    case LPX_TENSOR_Q4_K: return 15;
    case LPX_TENSOR_BF16: return 32;
    default: return 0;
  }
}

// K-quants need rows of whole 256-element super-blocks; like llama.cpp, rows that are not fall
// back to Q5_0 (same bits per weight class, 32-element blocks).
lpx_tensor_type type_for_row(lpx_tensor_type wanted, std::uint64_t columns) {
  return wanted == LPX_TENSOR_Q4_K && columns % 256 != 0 ? LPX_TENSOR_Q5_0 : wanted;
}

// The output head (here always the tied token_embd) as llama-quantize types it in a quantized
// file: Q6_K, or Q8_0 where rows are not whole super-blocks. So SmolLM2-135M "Q4_1" has a Q8_0
// head, as the real file does, and streams the same bytes per token.
lpx_tensor_type type_for_head(lpx_tensor_type wanted, std::uint64_t columns) {
  if (wanted == LPX_TENSOR_F16 || wanted == LPX_TENSOR_BF16 || wanted == LPX_TENSOR_Q8_0) return wanted;
  return columns % 256 == 0 ? LPX_TENSOR_Q6_K : LPX_TENSOR_Q8_0;
}

// Every tensor of the shape in file order: matrix(name, columns, rows, head) for the matrices,
// vector(name, n, base) for norms and biases, and tables() where the f32 rope tables go.
template <class Matrix, class Vector, class Tables>
void for_each_tensor(const ModelShape& s, Matrix matrix, Vector vector, Tables tables) {
  const std::uint64_t hd = s.head_dim();
  const FamilyTraits& f = s.family;
  // Tied unless the family has its own head; the embedding is then typed as an ordinary matrix.
  matrix("token_embd.weight", s.n_embd, s.n_vocab, /*head=*/!f.separate_output);
  vector("output_norm.weight", s.n_embd, 1.0f);
  if (f.separate_output) matrix("output.weight", s.n_embd, s.n_vocab, /*head=*/true);
  tables();
  for (std::uint32_t l = 0; l < s.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    vector(b + "attn_norm.weight", s.n_embd, 1.0f);
    if (f.fused) {
      matrix(b + "attn_qkv.weight", s.n_embd, hd * (s.n_head + 2 * s.n_head_kv));
    } else {
      matrix(b + "attn_q.weight", s.n_embd, hd * s.n_head);
      matrix(b + "attn_k.weight", s.n_embd, hd * s.n_head_kv);
      matrix(b + "attn_v.weight", s.n_embd, hd * s.n_head_kv);
    }
    if (s.attention_bias) {
      vector(b + "attn_q.bias", hd * s.n_head, 0.0f);
      vector(b + "attn_k.bias", hd * s.n_head_kv, 0.0f);
      vector(b + "attn_v.bias", hd * s.n_head_kv, 0.0f);
    }
    if (f.qk_norm) {
      vector(b + "attn_q_norm.weight", hd, 1.0f);
      vector(b + "attn_k_norm.weight", hd, 1.0f);
    }
    matrix(b + "attn_output.weight", hd * s.n_head, s.n_embd);
    if (f.post_norms) vector(b + "post_attention_norm.weight", s.n_embd, 1.0f);
    vector(b + "ffn_norm.weight", s.n_embd, 1.0f);
    if (f.fused) {
      matrix(b + "ffn_up.weight", s.n_embd, 2 * std::uint64_t{s.n_ff});  // gate | up
    } else {
      matrix(b + "ffn_gate.weight", s.n_embd, s.n_ff);
      matrix(b + "ffn_up.weight", s.n_embd, s.n_ff);
    }
    matrix(b + "ffn_down.weight", s.n_ff, s.n_embd);
    if (f.post_norms) vector(b + "post_ffw_norm.weight", s.n_embd, 1.0f);
  }
}

// Each matrix's type in the mix, as `lpx-pipeline quantize` plans it from an f32 file.
std::map<std::string, lpx_tensor_type> mix_types(const ModelShape& s, QuantMix mix) {
  std::vector<TensorToQuantize> tensors;
  for_each_tensor(
      s,
      [&](const std::string& name, std::uint64_t columns, std::uint64_t rows, bool = false) {
        tensors.push_back({name, LPX_TENSOR_F32, {static_cast<std::int64_t>(columns), static_cast<std::int64_t>(rows)}});
      },
      [](const std::string&, std::uint64_t, float) {}, [] {});
  std::map<std::string, lpx_tensor_type> types;
  for (const PlannedTensor& p : plan_quantization(tensors, s.n_layer, mix, /*pure=*/false)) {
    types[tensors[p.input_index].name] = p.type;
  }
  return types;
}

}  // namespace

std::optional<SynthType> synth_type(const std::string& name) {
  std::string upper = name;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  for (const TypeName& t : kTypes) {
    if (upper == t.name) return SynthType(t.type);
  }
  if (upper == "Q4_K_M") return SynthType(LPX_TENSOR_Q4_K, QuantMix::Q4_K_M);
  return std::nullopt;
}

std::string synth_type_names() {
  std::string out;
  for (const TypeName& t : kTypes) out += (out.empty() ? "" : ", ") + std::string(t.name);
  return out + ", Q4_K_M";
}

Expected<SynthResult> write_synthetic_model(const ModelShape& s, SynthType type,
                                            std::uint64_t seed, const std::string& path) {
  const std::string a = s.architecture;
  GgufWriter w;
  w.add_string("general.architecture", a);
  w.add_string("general.name", std::string("synthetic ") + s.name);
  w.add_u32("general.file_type", type.mixed ? quant_mix_file_type(type.mix) : file_type(type.type));
  w.add_u32(a + ".context_length", s.n_ctx);
  w.add_u32(a + ".embedding_length", s.n_embd);
  w.add_u32(a + ".block_count", s.n_layer);
  w.add_u32(a + ".feed_forward_length", s.n_ff);
  w.add_u32(a + ".attention.head_count", s.n_head);
  w.add_u32(a + ".attention.head_count_kv", s.n_head_kv);
  w.add_u32(a + ".rope.dimension_count", s.head_dim());
  const FamilyTraits& f = s.family;
  if (f.head_dim != 0) {
    w.add_u32(a + ".attention.key_length", f.head_dim);
    w.add_u32(a + ".attention.value_length", f.head_dim);
  }
  if (f.sliding_window != 0) w.add_u32(a + ".attention.sliding_window", f.sliding_window);
  if (f.rope_base_local != 0) w.add_f32(a + ".rope.freq_base_swa", f.rope_base_local);
  if (f.attention_softcap != 0) w.add_f32(a + ".attn_logit_softcapping", f.attention_softcap);
  if (f.final_softcap != 0) w.add_f32(a + ".final_logit_softcapping", f.final_softcap);
  if (f.longrope_original != 0) {  // Phi-3.5's LongRoPE: its attention factor for s = ctx / original
    const double s_ratio = static_cast<double>(s.n_ctx) / f.longrope_original;
    w.add_u32(a + ".rope.scaling.original_context_length", f.longrope_original);
    w.add_f32(a + ".rope.scaling.attn_factor",
              static_cast<float>(std::sqrt(1.0 + std::log(s_ratio) / std::log(static_cast<double>(f.longrope_original)))));
  }
  if (f.logit_scale != 0) w.add_f32(a + ".logit_scale", f.logit_scale);
  if (f.residual_scale != 0) w.add_f32(a + ".residual_scale", f.residual_scale);
  if (f.embedding_scale != 0) w.add_f32(a + ".embedding_scale", f.embedding_scale);
  if (f.attention_scale != 0) w.add_f32(a + ".attention.scale", f.attention_scale);
  w.add_f32(a + ".rope.freq_base", s.rope_base);
  w.add_f32(a + ".attention.layer_norm_rms_epsilon", s.rms_eps);
  w.add_u32(a + ".vocab_size", s.n_vocab);
  auto vocabulary = std::make_shared<SyntheticVocabulary>(make_vocabulary(s));
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", s.pre_tokenizer);
  w.add_strings("tokenizer.ggml.tokens", vocabulary->tokens);
  w.add_i32s("tokenizer.ggml.token_type", vocabulary->token_types);
  w.add_strings("tokenizer.ggml.merges", vocabulary->merges);
  w.add_u32("tokenizer.ggml.bos_token_id", static_cast<std::uint32_t>(vocabulary->bos));
  w.add_u32("tokenizer.ggml.eos_token_id", static_cast<std::uint32_t>(vocabulary->eos));
  w.add_bool("tokenizer.ggml.add_bos_token", s.vocabulary == VocabularyStyle::kLlama3);
  w.add_string("tokenizer.chat_template", vocabulary->chat_template);

  SynthResult result;
  std::uint64_t tensor_seed = seed;
  std::uint64_t fallbacks = 0;
  const auto planned = type.mixed ? mix_types(s, type.mix) : std::map<std::string, lpx_tensor_type>{};
  const auto matrix = [&](const std::string& name, std::uint64_t columns, std::uint64_t rows,
                          bool head = false) {
    const lpx_tensor_type t = type.mixed ? planned.at(name)
                              : head     ? type_for_head(type.type, columns)
                                         : type_for_row(type.type, columns);
    if (!type.mixed && t != type.type && !head) ++fallbacks;
    const std::uint64_t this_seed = ++tensor_seed;
    w.add_tensor(name, ggml_type_id(t), {columns, rows}, row_bytes(t, columns),
                 [t, columns, this_seed](std::uint64_t first, std::uint64_t n, std::uint8_t* out) {
                   fill_random_rows(t, columns, this_seed, first, n, out);
                 });
    result.parameters += columns * rows;
  };
  // Norm weights (base 1) and biases (base 0): base + a value in [-0.2, 0.2) of the tensor's
  // own, so that a norm or bias applied to the wrong place changes the output.
  const auto vector = [&](const std::string& name, std::uint64_t n, float base) {
    const std::uint64_t this_seed = ++tensor_seed;
    w.add_tensor(name, 0, {n}, n * 4, [n, base, this_seed](std::uint64_t, std::uint64_t, std::uint8_t* out) {
      std::uint64_t state = this_seed * 0x9E3779B97F4A7C15u;
      for (std::uint64_t i = 0; i < n; ++i) {
        state = state * 6364136223846793005u + 1442695040888963407u;  // Knuth's MMIX LCG
        const float unit = static_cast<float>(state >> 40) / static_cast<float>(1u << 24);
        const float v = base + 0.4f * unit - 0.2f;
        std::memcpy(out + i * 4, &v, 4);
      }
    });
    result.parameters += n;
  };

  const std::uint64_t hd = s.head_dim();
  const auto tables = [&] {
    if (s.llama3_rope) {  // Llama 3.x: the divisors convert_hf_to_gguf.py writes for rope_scaling "llama3"
      const std::vector<float> factors = llama3_rope_divisors(s.rope_base, static_cast<std::uint32_t>(hd), Llama3RopeScaling{});
      w.add_tensor("rope_freqs.weight", 0, {factors.size()}, factors.size() * 4,
                   [factors](std::uint64_t, std::uint64_t, std::uint8_t* out) {
                     std::memcpy(out, factors.data(), factors.size() * 4);
                   });
    }
    if (f.longrope_original != 0) {  // divisors per rotated dim pair, growing like Phi-3.5's
      const std::uint64_t pairs = hd / 2;
      const auto factors = [pairs](std::string name, float step) {
        return std::make_pair(std::move(name), [pairs, step](std::uint64_t, std::uint64_t, std::uint8_t* out) {
          for (std::uint64_t i = 0; i < pairs; ++i) {
            const float v = 1.0f + step * static_cast<float>(i);
            std::memcpy(out + i * 4, &v, 4);
          }
        });
      };
      for (auto [name, fill] : {factors("rope_factors_long.weight", 1.3f),
                                factors("rope_factors_short.weight", 0.04f)}) {
        w.add_tensor(name, 0, {pairs}, pairs * 4, fill);
      }
    }
  };
  for_each_tensor(s, matrix, vector, tables);
  if (fallbacks > 0) {
    result.notes = std::to_string(fallbacks) + " matrices with rows not a multiple of 256 are Q5_0 (as llama.cpp does)";
  }
  auto bytes = w.write(path);
  if (!bytes) return unexpected(bytes.error());
  result.bytes = *bytes;
  return result;
}

Expected<std::string> resolve_model_spec(const std::string& model) {
  if (model.rfind("synth:", 0) != 0) return model;
  const std::size_t colon = model.find(':', 6);
  if (colon == std::string::npos) return invalid_argument("--model " + model + ": expected synth:NAME:TYPE");
  const std::string name = model.substr(6, colon - 6), type_name = model.substr(colon + 1);
  const ModelShape* shape = find_model_shape(name);
  if (shape == nullptr) {
    return invalid_argument("--model " + model + ": unknown shape '" + name + "' (known: " +
                      model_shape_names() + ")");
  }
  const auto type = synth_type(type_name);
  if (!type) {
    return invalid_argument("--model " + model + ": unknown type '" + type_name + "' (" +
                      synth_type_names() + ")");
  }
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("lpx-synth-" + std::string(kLayoutVersion) + "-" + name + "-" + type_name + ".gguf");
  if (std::filesystem::exists(path)) return path.string();
  // A run cut short (a timeout, ^C) leaves only the partial file, never a truncated model.
  const std::filesystem::path partial =
      path.string() + ".partial-" + std::to_string(static_cast<long>(::getpid()));
  std::fprintf(stderr, "writing %s\n", path.c_str());
  auto written = write_synthetic_model(*shape, *type, 1, partial.string());
  if (!written) {
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
    return unexpected(written.error());
  }
  std::error_code error;
  std::filesystem::rename(partial, path, error);
  if (error) return io_error(path.string() + ": " + error.message());
  return path.string();
}

}  // namespace lpx::core::synth
