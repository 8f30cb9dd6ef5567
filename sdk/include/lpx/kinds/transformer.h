/* The architecture-neutral description of a dense decoder-only transformer (since 2.0).
 *
 * Every architecture LPX runs (core/model/architectures/) maps its model file onto this one
 * description, and a quantization backend sees nothing else: no architecture names, only
 * layers, tensors, numbers and feature flags. So adding an architecture that combines features
 * already listed here changes the core alone; a new feature is a new flag (a minor version,
 * appended), which a backend that does not know it refuses by its flags.
 *
 * One decode step over the rows of a batch (x: rows x n_embd, f32), per layer l:
 *   h     = rms_norm(x, attn_norm)
 *   q,k,v = h.Wq + bq, h.Wk + bk, h.Wv + bv     or, with wqkv, the columns [q | k | v] of h.Wqkv
 *   q,k   = rms_norm of each head (q_norm, k_norm: head_dim weights)       when set
 *   q,k   = rope(q, k, *rope)                    unless rope is NULL or rope->n_rot 0 (NoPE)
 *   a     = attention(q, the cache's k and v; attention_scale, window, attention_softcap)
 *   o     = rms_norm(a.Wo, post_attention_norm)                   the norm only when set
 *   x     = x + residual_scale * o
 *   h     = rms_norm(x, ffn_norm)
 *   g,u   = h.Wgate, h.Wup                  or, with ffn_gate_up, the columns [g | u] of one
 *   o     = rms_norm((act(g) * u).Wdown, post_ffn_norm)                 the norm only when set
 *   x     = x + residual_scale * o
 * with act = silu (LPX_ACTIVATION_SILU) or the tanh approximation of gelu. Before the first
 * layer x = embedding_scale * token_embd[token]; after the last
 *   logits = logit_scale * (rms_norm(x, output_norm).Woutput)
 *   logits = final_softcap * tanh(logits * (1 / final_softcap))        when final_softcap > 0
 * Every rms_norm uses norm_eps. The kernels' arithmetic is quant_backend.h's contract.
 *
 * Ownership: everything a description points to (tensor views, rope factors, the layer array,
 * strings) is caller-owned and valid during the call it is passed to (model_load); a backend
 * copies what it keeps.
 */
#ifndef LPX_KINDS_TRANSFORMER_H
#define LPX_KINDS_TRANSFORMER_H

#include <stddef.h>
#include <stdint.h>

#include "lpx/kinds/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* since 2.0. Pair ordering of a rotary embedding. */
typedef enum lpx_rope_mode {
  LPX_ROPE_NORMAL = 0, /* rotates (x[2i], x[2i+1]): Llama */
  LPX_ROPE_NEOX = 2    /* rotates (x[i], x[i + n_rot/2]): GPT-NeoX, Qwen2, Gemma, Phi-3 */
} lpx_rope_mode;

/* since 2.0. Dim pair i (i < n_rot/2) of a row at position p is rotated by the angle
 * theta = p * freq_scale * freq_base^(-2i/n_rot) / (freq_factors ? freq_factors[i] : 1),
 * as (a, b) -> m * (a cos theta - b sin theta, a sin theta + b cos theta), where m is
 * attn_factor, or 1 when attn_factor is 0 (so zero-initialised params rotate plainly).
 * n_rot == 0: no rotation at all (a NoPE layer). */
typedef struct lpx_rope_params {
  uint32_t struct_size;
  int32_t mode;               /* an lpx_rope_mode */
  uint32_t n_rot;             /* rotated dims per head, even, <= head_dim; 0: none */
  float freq_base;
  float freq_scale;           /* 1 / linear scaling factor */
  const float* freq_factors;  /* NULL, or n_rot/2 divisors (Llama 3, Phi-3 LongRoPE) */
  float attn_factor;          /* magnitude of the rotation (0 reads as 1); != 1 only for
                                 LongRoPE/YaRN models */
} lpx_rope_params;

/* since 2.0. The feed-forward's gate activation. */
typedef enum lpx_activation {
  LPX_ACTIVATION_SILU = 0,     /* SwiGLU: silu(g) * u, silu(v) = v / (1 + exp(-v)) */
  LPX_ACTIVATION_GELU_TANH = 1 /* GeGLU: gelu(g) * u, gelu(v) = v/2 (1 + tanh(sqrt(2/pi)
                                  (v + 0.044715 v^3))) */
} lpx_activation;

/* since 2.0. What a description uses beyond the plain pre-norm, rotary, SwiGLU transformer
 * (Llama 2), one bit each. lpx_transformer_desc.features holds the bits the description needs
 * (the host computes them from its contents); a backend lists in
 * lpx_quant_backend_api.model_features the bits it can run and is never handed a description
 * that needs another. New features are new bits, appended in minor versions. */
typedef enum lpx_model_feature {
  LPX_FEATURE_QKV_BIAS = 1u << 0,        /* bq, bk, bv (Qwen2) */
  LPX_FEATURE_QK_NORM = 1u << 1,         /* q_norm, k_norm (Qwen3, Gemma 3) */
  LPX_FEATURE_POST_NORMS = 1u << 2,      /* post_attention_norm, post_ffn_norm (Gemma 2/3) */
  LPX_FEATURE_SLIDING_WINDOW = 1u << 3,  /* a layer with window > 0 (Gemma, Phi-3) */
  LPX_FEATURE_NOPE_LAYERS = 1u << 4,     /* a layer without rope (SmolLM3) */
  LPX_FEATURE_LAYER_ROPE = 1u << 5,      /* rope parameters that differ between layers */
  LPX_FEATURE_ROPE_FACTORS = 1u << 6,    /* rope->freq_factors (Llama 3, Phi-3) */
  LPX_FEATURE_ROPE_ATTN_FACTOR = 1u << 7,/* rope->attn_factor other than 0 or 1 (Phi-3 LongRoPE) */
  LPX_FEATURE_GELU = 1u << 8,            /* activation GELU_TANH (Gemma) */
  LPX_FEATURE_FUSED_QKV = 1u << 9,       /* wqkv (Phi-3) */
  LPX_FEATURE_FUSED_GATE_UP = 1u << 10,  /* ffn_gate_up (Phi-3) */
  LPX_FEATURE_SCALES = 1u << 11,         /* an embedding, residual or logit scale other than 0
                                            or 1 (Gemma, Granite) */
  LPX_FEATURE_ATTENTION_SOFTCAP = 1u << 12, /* attention_softcap > 0 (Gemma 2) */
  LPX_FEATURE_FINAL_SOFTCAP = 1u << 13   /* final_softcap > 0 (Gemma 2) */
} lpx_model_feature;

/* Every feature bit ABI 2.0 defines: what a backend that runs them all returns. */
#define LPX_MODEL_FEATURES_2_0 UINT64_C(0x3FFF)

/* A feature bit's name for messages ("sliding-window attention"), or NULL for a bit this
 * header does not define. Static strings. */
static inline const char* lpx_model_feature_name(uint64_t bit) {
  switch (bit) {
    case LPX_FEATURE_QKV_BIAS: return "q/k/v biases";
    case LPX_FEATURE_QK_NORM: return "q/k norms";
    case LPX_FEATURE_POST_NORMS: return "post-attention and post-feed-forward norms";
    case LPX_FEATURE_SLIDING_WINDOW: return "sliding-window attention";
    case LPX_FEATURE_NOPE_LAYERS: return "layers without rope";
    case LPX_FEATURE_LAYER_ROPE: return "per-layer rope parameters";
    case LPX_FEATURE_ROPE_FACTORS: return "rope frequency factors";
    case LPX_FEATURE_ROPE_ATTN_FACTOR: return "a rope attention factor";
    case LPX_FEATURE_GELU: return "GeGLU feed-forward";
    case LPX_FEATURE_FUSED_QKV: return "a fused q/k/v projection";
    case LPX_FEATURE_FUSED_GATE_UP: return "a fused gate/up projection";
    case LPX_FEATURE_SCALES: return "embedding, residual or logit scales";
    case LPX_FEATURE_ATTENTION_SOFTCAP: return "attention soft-capping";
    case LPX_FEATURE_FINAL_SOFTCAP: return "final logit soft-capping";
    default: return NULL;
  }
}

/* since 2.0. One layer. Tensor views: NULL where the layer has no such tensor; norm weights and
 * biases are F32. The rope params are pointed to, not embedded, so each struct grows on its
 * own. */
typedef struct lpx_transformer_layer {
  uint32_t struct_size;      /* sizeof(lpx_transformer_layer) as the host compiled it */
  uint32_t window;           /* attended positions, the row's own included; 0: all (global) */
  const lpx_rope_params* rope; /* this layer's rotary embedding; NULL (or n_rot 0): none */
  const lpx_tensor_view* attn_norm;
  const lpx_tensor_view* wq; /* NULL when wqkv is set; likewise wk, wv */
  const lpx_tensor_view* wk;
  const lpx_tensor_view* wv;
  const lpx_tensor_view* wqkv; /* rows: n_head*head_dim + 2*n_head_kv*head_dim (q, k, v) */
  const lpx_tensor_view* bq; /* n_head x head_dim, or NULL */
  const lpx_tensor_view* bk; /* n_head_kv x head_dim, or NULL; likewise bv */
  const lpx_tensor_view* bv;
  const lpx_tensor_view* q_norm;  /* head_dim weights, or NULL; likewise k_norm */
  const lpx_tensor_view* k_norm;
  const lpx_tensor_view* wo;
  const lpx_tensor_view* post_attention_norm; /* NULL: none */
  const lpx_tensor_view* ffn_norm;
  const lpx_tensor_view* ffn_gate;    /* NULL when ffn_gate_up is set; likewise ffn_up */
  const lpx_tensor_view* ffn_up;
  const lpx_tensor_view* ffn_gate_up; /* rows: 2 * n_ff (gate, then up) */
  const lpx_tensor_view* ffn_down;
  const lpx_tensor_view* post_ffn_norm; /* NULL: none */
} lpx_transformer_layer;

/* since 2.0. The whole model, and what one backend step may carry. */
typedef struct lpx_transformer_desc {
  uint32_t struct_size;      /* sizeof(lpx_transformer_desc) as the host compiled it */
  uint64_t features;         /* the lpx_model_feature bits this description needs */
  const char* architecture;  /* for messages only ("gemma3"); a backend never branches on it */
  uint32_t n_layer;
  uint32_t n_embd;
  uint32_t n_head;
  uint32_t n_head_kv;        /* divides n_head */
  uint32_t head_dim;         /* of q, k and v */
  uint32_t n_ff;
  uint32_t n_vocab;
  int32_t activation;        /* an lpx_activation */
  float norm_eps;
  float attention_scale;     /* applied to q.k: 1/sqrt(head_dim), or the model's own */
  float attention_softcap;   /* > 0: scores become softcap * tanh(score * (1 / softcap)) */
  float embedding_scale;     /* 0 or 1: none (0 reads as 1, as in every scale here) */
  float residual_scale;      /* 0 or 1: none */
  float logit_scale;         /* 0 or 1: none */
  float final_softcap;       /* > 0: logits become softcap * tanh(logits * (1 / softcap)) */
  const lpx_tensor_view* token_embd;
  const lpx_tensor_view* output_norm;
  const lpx_tensor_view* output;  /* may be token_embd itself (tied embeddings) */
  const lpx_transformer_layer* layers; /* n_layer layers, layer_stride bytes apart */
  uint32_t layer_stride;     /* sizeof(lpx_transformer_layer) as the host compiled it */
  uint32_t kv_block_size;    /* positions per KV block */
  uint32_t kv_blocks;        /* blocks per layer pool */
  uint32_t max_rows;         /* the most rows (tokens) one step carries */
  uint32_t max_sequences;    /* the most sequences one step carries */
  uint32_t max_context;      /* the most positions one sequence reaches */
} lpx_transformer_desc;

/* The layer `index` of `desc`, by its stride (never by sizeof: a host built against a later
 * minor may pass larger layers). */
static inline const lpx_transformer_layer* lpx_transformer_layer_at(const lpx_transformer_desc* desc,
                                                                    uint32_t index) {
#ifdef __cplusplus
  return reinterpret_cast<const lpx_transformer_layer*>(
      reinterpret_cast<const char*>(desc->layers) + static_cast<uint64_t>(index) * desc->layer_stride);
#else
  return (const lpx_transformer_layer*)((const char*)desc->layers +
                                        (uint64_t)index * desc->layer_stride);
#endif
}

#ifdef __cplusplus
}
#endif

#endif
