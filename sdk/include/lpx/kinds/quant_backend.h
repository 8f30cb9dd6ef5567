/* Quantization-backend plugins: the tensor kernels of one device for the decode engine.
 *
 * The core engine owns weights, KV cache and activations and calls these kernels on them.
 * Threading: one instance is driven by one engine thread at a time; the backend may use its own
 * worker threads inside a call and must have finished with every buffer when the call returns.
 *
 * Arithmetic contract (since 1.2). Every backend computes the same function, so swapping backends
 * changes speed, not answers (up to float summation order):
 *   - matmul first rounds each activation row to the weight type's *dot format*, then takes exact
 *     integer (or float) dot products block by block:
 *       F32 -> f32 activations; F16 -> activations rounded to f16; BF16 -> rounded to bf16;
 *       Q8_0, Q4_0, Q5_0 -> Q8_0 blocks (32 int8, f16 scale amax/127);
 *       Q4_1, Q5_1 -> Q8_1 blocks (32 int8, f16 scale and f16 scale*sum);
 *       Q4_K, Q5_K, Q6_K, Q8_K -> Q8_K blocks (256 int8, f32 scale, 16-element sums).
 *     This is the arithmetic of the GGUF ecosystem's reference engine; kernels/reference holds
 *     the scalar definition that the tests hold every backend to.
 *   - a backend may also offer, as an option that is off by default, f32 activations: each
 *     weight row dequantized exactly (the f32 values of dequantize_row) times the f32 activations,
 *     summed in one fixed order whatever the batch size and thread count (the CPU backends'
 *     `activations = "f32"`: the F32 dot order, four accumulators of eight lanes over steps of
 *     32; kernels/reference/matmul_f32.hpp). Slower, but free of the 8-bit activation rounding.
 *   - the KV cache holds f16. Attention rounds q to f16 for q.k, and the softmax weights to f16
 *     for the weighted sum of v; scores, softmax and accumulation are f32.
 */
#ifndef LPX_KINDS_QUANT_BACKEND_H
#define LPX_KINDS_QUANT_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "lpx/kinds/tensor.h"
#include "lpx/kinds/sampling_program.h"
#include "lpx/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* since 1.2. The most work one engine step hands the backend; see reserve. */
typedef struct lpx_backend_limits {
  uint32_t struct_size;     /* sizeof(lpx_backend_limits) as the host compiled it */
  uint32_t max_rows;        /* activation rows (tokens) per matmul, norm, rope call */
  uint64_t max_columns;     /* widest activation row (the largest weight dims[0]) */
  uint32_t max_context;     /* most cache positions one attention call reads */
  uint32_t max_heads;       /* query heads per row */
  uint32_t head_dim;
} lpx_backend_limits;

/* since 1.2. Pair ordering of a rotary embedding. */
typedef enum lpx_rope_mode {
  LPX_ROPE_NORMAL = 0, /* rotates (x[2i], x[2i+1]): Llama */
  LPX_ROPE_NEOX = 2    /* rotates (x[i], x[i + n_rot/2]): GPT-NeoX, Qwen2 */
} lpx_rope_mode;

/* since 1.2. Dim pair i (i < n_rot/2) of a row at position p is rotated by the angle
 * p * freq_scale * freq_base^(-2i/n_rot) / (freq_factors ? freq_factors[i] : 1). */
typedef struct lpx_rope_params {
  uint32_t struct_size;
  int32_t mode;               /* an lpx_rope_mode */
  uint32_t n_rot;             /* rotated dims per head, even, <= head_dim */
  float freq_base;
  float freq_scale;           /* 1 / linear scaling factor */
  const float* freq_factors;  /* NULL, or n_rot/2 divisors (Llama-3 scaling); caller-owned */
} lpx_rope_params;

/* since 1.2. One sequence's attention for one layer. The KV cache is paged: the sequence's
 * cache position t lives in physical block block_table[t / block_size], slot t % block_size.
 * A block of k_cache (and of v_cache) holds block_size x n_kv_heads x head_dim f16 values
 * (IEEE binary16 bits), slot-major. Query row i attends to positions 0..positions[i], which
 * must already be in the cache. Query head h reads kv head h / (n_heads / n_kv_heads).
 * All pointers are caller-owned and valid during the call. */
typedef struct lpx_attention_args {
  uint32_t struct_size;
  const float* q;            /* n_rows x n_heads x head_dim, f32 */
  float* out;                /* n_rows x n_heads x head_dim, f32; not aliasing q */
  const int32_t* positions;  /* n_rows cache positions, one per query row */
  uint32_t n_rows;
  uint32_t n_heads;
  uint32_t n_kv_heads;       /* divides n_heads */
  uint32_t head_dim;
  float scale;               /* applied to q.k before the softmax, usually 1/sqrt(head_dim) */
  const uint16_t* k_cache;   /* this layer's pool of K blocks */
  const uint16_t* v_cache;   /* this layer's pool of V blocks */
  const int32_t* block_table;
  uint32_t block_size;       /* positions per block */
} lpx_attention_args;

/* since 1.4. A model kept resident on a backend's own device (GPU memory): its weights, its
 * paged KV cache and its activation buffers. Opaque; made by model_load, ended by model_free. */
typedef struct lpx_device_model lpx_device_model;

/* since 1.4. One layer of the llama family (llama, qwen2). Tensor views point into the model
 * file's memory, caller-owned; valid during model_load only (the backend copies to its device
 * what it needs). Norm weights are F32 tensors. */
typedef struct lpx_llama_layer {
  const lpx_tensor_view* attn_norm;
  const lpx_tensor_view* wq;
  const lpx_tensor_view* wk;
  const lpx_tensor_view* wv;
  const lpx_tensor_view* wo;
  const float* bq;  /* NULL, or n_head x head_dim f32 biases of q (qwen2) */
  const float* bk;  /* NULL, or n_head_kv x head_dim */
  const float* bv;  /* NULL, or n_head_kv x head_dim */
  const lpx_tensor_view* ffn_norm;
  const lpx_tensor_view* ffn_gate;
  const lpx_tensor_view* ffn_up;
  const lpx_tensor_view* ffn_down;
} lpx_llama_layer;

/* since 1.4. What model_load puts on the device: the llama-family forward pass of
 * LlamaForward (core/engine/llama_forward.hpp), the same arithmetic as the per-op kernels
 * above, and a paged KV pool of kv_blocks blocks of kv_block_size positions per layer (the
 * engine hands out block indices; 0 .. kv_blocks - 1). All pointers caller-owned, valid during
 * model_load only. */
typedef struct lpx_llama_model_desc {
  uint32_t struct_size;      /* sizeof(lpx_llama_model_desc) as the host compiled it */
  uint32_t n_layer;
  uint32_t n_embd;
  uint32_t n_head;
  uint32_t n_head_kv;
  uint32_t head_dim;         /* of q and k; v has the same */
  uint32_t n_ff;
  uint32_t n_vocab;
  float rms_norm_eps;
  float attention_scale;     /* applied to q.k, usually 1/sqrt(head_dim) */
  lpx_rope_params rope;      /* freq_factors: NULL or n_rot/2 floats, copied */
  const lpx_tensor_view* token_embd;
  const lpx_tensor_view* output_norm;
  const lpx_tensor_view* output;     /* may be token_embd itself (tied embeddings) */
  const lpx_llama_layer* layers;     /* n_layer */
  uint32_t kv_block_size;    /* positions per KV block */
  uint32_t kv_blocks;        /* blocks per layer pool */
  uint32_t max_rows;         /* the most rows (tokens) one model_forward call carries */
  uint32_t max_sequences;    /* the most sequences one call carries */
  uint32_t max_context;      /* the most positions one sequence reaches */
} lpx_llama_model_desc;

/* since 1.4. Memory a device model holds, for logs and /metrics. */
typedef struct lpx_device_model_info {
  uint32_t struct_size;
  uint64_t weight_bytes;     /* weights as stored on the device */
  uint64_t kv_cache_bytes;
  uint64_t workspace_bytes;  /* activations, scratch, graphs */
  uint64_t device_total_bytes;
  uint64_t device_free_bytes; /* after the load */
  const char* device_name;   /* UTF-8, e.g. "NVIDIA H200 (cuda:0, sm_90)"; owned by the model */
} lpx_device_model_info;

/* since 1.4. One step of a device model: the rows of a Batch (core/engine/batch.hpp). Row r
 * of sequence s writes its K/V at cache position positions[r] of that sequence's pages and
 * attends to positions 0..positions[r]. Host pointers, caller-owned, valid during the call;
 * the backend must be done with them when it returns. */
typedef struct lpx_forward_args {
  uint32_t struct_size;
  uint32_t n_rows;                  /* 1 .. max_rows */
  const int32_t* tokens;            /* n_rows token ids */
  const int32_t* positions;         /* n_rows cache positions */
  uint32_t n_sequences;             /* 1 .. max_sequences */
  const uint32_t* sequence_rows;    /* n_sequences + 1 offsets: sequence s owns rows
                                       [sequence_rows[s], sequence_rows[s + 1]) */
  const int32_t* block_tables;      /* n_sequences x block_table_stride block indices */
  uint32_t block_table_stride;      /* >= blocks of the longest sequence */
  uint32_t n_outputs;               /* rows whose logits (or argmax) are wanted;
                                       at most max_sequences */
  const uint32_t* output_rows;      /* n_outputs rows, ascending */
  float* logits;                    /* n_outputs x n_vocab f32, or NULL */
  int32_t* argmax;                  /* n_outputs greedy token ids (lowest id among equal
                                       maxima), or NULL: computed on the device, so only the
                                       ids cross to the host */
  /* since 1.5, read only by backends declaring the capability "device-sampling". n_outputs
   * programs (sampling_program.h) or NULL; when set, argmax[o] receives the token program o
   * picks from output row o instead of the greedy one. Caller-owned, valid during the call. */
  const lpx_sampling_program* sampling;
} lpx_forward_args;

typedef struct lpx_quant_backend_api {
  uint32_t struct_size; /* sizeof(lpx_quant_backend_api) as the plugin compiled it */

  /* since 1.0. Required. 1 when `type` can be the weight of `matmul` on this machine. */
  int32_t (*supports_type)(lpx_instance* instance, int32_t type /* lpx_tensor_type */);
  /* Required. y[b][r] = sum_c W[r][c] * x[b][c] for b < batch, where W is `weight` with
   * dims[0] = columns and dims[1] = rows; x is batch x columns f32, y is batch x rows f32, both
   * row-major, caller-owned, not aliased. Must not allocate. */
  lpx_status* (*matmul)(lpx_instance* instance, const lpx_tensor_view* weight, const float* x,
                        float* y, size_t batch);
  /* Required. Row `row` of `weight` converted to f32 into `out` (dims[0] floats). */
  lpx_status* (*dequantize_row)(lpx_instance* instance, const lpx_tensor_view* weight, int64_t row,
                                float* out);

  /* since 1.2. Required. Called by the engine before decoding and whenever its limits grow;
   * after it returns, no kernel call below allocates for work within `limits`. */
  lpx_status* (*reserve)(lpx_instance* instance, const lpx_backend_limits* limits);
  /* Required. out[r] = (x[r] * 1/sqrt(mean(x[r]^2) + eps)) * weight, for r < rows; each row has
   * n floats; the mean is accumulated in double. out may alias x. */
  lpx_status* (*rms_norm)(lpx_instance* instance, const float* x, const float* weight, float* out,
                          size_t rows, size_t n, float eps);
  /* Required. Rotates, in place, the first n_rot dims of every head of every row:
   * x is rows x heads x head_dim f32; row r is at position positions[r]. */
  lpx_status* (*rope)(lpx_instance* instance, float* x, size_t rows, size_t heads, size_t head_dim,
                      const int32_t* positions, const lpx_rope_params* params);
  /* Required. out[i] = silu(gate[i]) * up[i], silu(v) = v / (1 + exp(-v)). out may alias gate. */
  lpx_status* (*swiglu)(lpx_instance* instance, const float* gate, const float* up, float* out,
                        size_t n);
  /* Required. Causal attention of one sequence's query rows over its paged KV cache. */
  lpx_status* (*attention)(lpx_instance* instance, const lpx_attention_args* args);

  /* since 1.4. Optional, all three or none (NULL for host-memory backends such as cpu): a
   * backend with its own device memory runs whole forward steps there. The engine then keeps
   * only the KV block bookkeeping and calls model_forward once per step instead of the per-op
   * kernels above (which such a backend still implements on host buffers, for tests and tools).
   * model_load fails with LPX_ERR_UNSUPPORTED for a shape or type it cannot run, and with
   * LPX_ERR_OUT_OF_MEMORY when weights + KV cache + workspace do not fit, saying how much. */
  lpx_status* (*model_load)(lpx_instance* instance, const lpx_llama_model_desc* desc,
                            lpx_device_model** out_model, lpx_device_model_info* out_info);
  lpx_status* (*model_forward)(lpx_instance* instance, lpx_device_model* model,
                               const lpx_forward_args* args);
  /* Frees everything model_load took. NULL is a no-op. */
  void (*model_free)(lpx_instance* instance, lpx_device_model* model);
} lpx_quant_backend_api;

#ifdef __cplusplus
}
#endif

#endif
