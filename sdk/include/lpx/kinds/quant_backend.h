/* Quantization-backend plugins: the tensor kernels of one device for the decode engine.
 *
 * Two ways to run a model (ABI 2.0), both on the architecture-neutral description of
 * lpx/kinds/transformer.h, so a backend knows no architecture by name:
 *   - per-op (host memory, e.g. cpu): the core owns weights, KV cache and activations and
 *     builds each step from the kernels below (matmul, rms_norm, rope, swiglu, geglu,
 *     attention);
 *   - device models (own memory, e.g. cuda): model_load takes the whole description and
 *     model_forward runs a step.
 * Either way the backend says which lpx_model_feature bits it runs (model_features) and the
 * host never hands it a description that needs another: it refuses the model first, naming
 * the missing features. Everything here is ABI 2.0 (lpx/version.h has its 1.x lineage); later
 * additions say "since 2.N".
 *
 * Threading: one instance is driven by one engine thread at a time; the backend may use its own
 * worker threads inside a call and must have finished with every buffer when the call returns.
 *
 * Arithmetic contract. A backend computes one of these matmul arithmetics, named by its
 * `activations` option where it has several; swapping backends with the same one changes speed,
 * not answers (up to float summation order):
 *   - "q8", the arithmetic of the GGUF ecosystem's reference engine: matmul first rounds each
 *     activation row to the weight type's *dot format*, then takes exact integer (or float) dot
 *     products block by block:
 *       F32 -> f32 activations; F16 -> activations rounded to f16; BF16 -> rounded to bf16;
 *       Q8_0, Q4_0, Q5_0 -> Q8_0 blocks (32 int8, f16 scale amax/127);
 *       Q4_1, Q5_1 -> Q8_1 blocks (32 int8, f16 scale and f16 scale*sum);
 *       Q4_K, Q5_K, Q6_K, Q8_K -> Q8_K blocks (256 int8, f32 scale, 16-element sums).
 *   - "f32": each weight row dequantized exactly (the f32 values of dequantize_row) times the
 *     f32 activations, summed in one fixed order whatever the batch size and thread count (the
 *     F32 dot order, four accumulators of eight lanes over steps of 32;
 *     kernels/reference/matmul_f32.hpp). Free of activation rounding; the slowest.
 *   - "i16" (the CPU backends' default since their 1.3.0): Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 weights
 *     against activations rounded to blocks of 32 int16 (f32 scale amax/32767), exact integer
 *     lane sums, one fma per block and lane (kernels/reference/matmul_i16.hpp); every other
 *     weight type as "f32". Within amax/65534 of the f32 activations, at integer speed.
 *   kernels/reference holds the scalar definition of each, which the tests hold every backend
 *   to; a backend that offers only one says so in its option (the GPU backend: "f32").
 *   - the KV cache holds f16. Attention rounds q to f16 for q.k, and the softmax weights to f16
 *     for the weighted sum of v; scores, softmax and accumulation are f32.
 */
#ifndef LPX_KINDS_QUANT_BACKEND_H
#define LPX_KINDS_QUANT_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "lpx/kinds/sampling_program.h"
#include "lpx/kinds/tensor.h"
#include "lpx/kinds/transformer.h"
#include "lpx/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most work one engine step hands the backend; see reserve. */
typedef struct lpx_backend_limits {
  uint32_t struct_size;     /* sizeof(lpx_backend_limits) as the host compiled it */
  uint32_t max_rows;        /* activation rows (tokens) per matmul, rope call; an rms_norm
                               may see max_rows x max_heads rows (per-head q/k norms) */
  uint64_t max_columns;     /* widest activation row (the largest weight dims[0]) */
  uint32_t max_context;     /* most cache positions one attention call reads */
  uint32_t max_heads;       /* query heads per row */
  uint32_t head_dim;
} lpx_backend_limits;

/* One sequence's attention for one layer. The KV
 * cache is paged: the sequence's cache position t lives in physical block
 * block_table[t / block_size], slot t % block_size. A block of k_cache (and of v_cache) holds
 * block_size x n_kv_heads x head_dim f16 values (IEEE binary16 bits), slot-major. Query row i
 * attends to positions 0..positions[i] (with a window W > 0, only the last W of them:
 * positions[i] - W + 1 .. positions[i]), which must already be in the cache. Query head h
 * reads kv head h / (n_heads / n_kv_heads). A score is s = scale * q.k, then, with softcap > 0,
 * softcap * tanh(s * (1 / softcap)) (1 / softcap rounded to f32 first). Positions outside the window weigh exactly 0, and every sum
 * keeps the grouping it has without a window, so a window changes no other arithmetic.
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
  uint32_t window;           /* 0, or the most positions a row attends to */
  float softcap;             /* 0, or the score soft cap */
} lpx_attention_args;

/* A model kept resident on a backend's own device (GPU memory): its weights, its
 * paged KV cache and its activation buffers. Opaque; made by model_load, ended by model_free.
 * It runs the step of lpx/kinds/transformer.h with the same arithmetic as the per-op kernels,
 * on a paged KV pool of kv_blocks blocks of kv_block_size positions per layer (the engine
 * hands out block indices 0 .. kv_blocks - 1). */
typedef struct lpx_device_model lpx_device_model;

/* Memory a device model holds, for logs and /metrics. */
typedef struct lpx_device_model_info {
  uint32_t struct_size;
  uint64_t weight_bytes;     /* weights as stored on the device */
  uint64_t kv_cache_bytes;
  uint64_t workspace_bytes;  /* activations, scratch, graphs */
  uint64_t device_total_bytes;
  uint64_t device_free_bytes; /* after the load */
  const char* device_name;   /* UTF-8, e.g. "NVIDIA H200 (cuda:0, sm_90)"; owned by the model */
} lpx_device_model_info;

/* One step of a device model: the rows the engine batches together in one step. Row r
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
  /* Read only by backends declaring the capability "device-sampling". n_outputs
   * programs (sampling_program.h) or NULL; when set, argmax[o] receives the token program o
   * picks from output row o instead of the greedy one. Caller-owned, valid during the call. */
  const lpx_sampling_program* sampling;
  /* since 2.8. Read only by model_enqueue (model_forward requires NULL). NULL, or n_rows
   * entries: -1, the row's token is tokens[r]; o >= 0, it is the token the step queued just
   * before this one picked for its output row o (o < that step's n_outputs; no model_forward
   * between the two; LPX_ERR_INVALID_ARGUMENT otherwise). The device takes it from its own
   * copy, so the host can queue step N + 1 before it has read step N's picks; tokens[r] is
   * then not read. Caller-owned, valid during the call. */
  const int32_t* previous_outputs;
} lpx_forward_args;

/* The table. ABI 2.0 laid it out anew (1.x had no geglu or model_features, and took a
 * llama-only description); within 2.x it only grows at the end. */
typedef struct lpx_quant_backend_api {
  uint32_t struct_size; /* sizeof(lpx_quant_backend_api) as the plugin compiled it */

  /* Required. 1 when `type` can be the weight of
   * `matmul` on this machine. */
  int32_t (*supports_type)(lpx_instance* instance, int32_t type /* lpx_tensor_type */);
  /* Required. y[b][r] = sum_c W[r][c] * x[b][c] for b < batch, where W is `weight` with
   * dims[0] = columns and dims[1] = rows; x is batch x columns f32, y is batch x rows f32, both
   * row-major, caller-owned, not aliased. Must not allocate. */
  lpx_status* (*matmul)(lpx_instance* instance, const lpx_tensor_view* weight, const float* x,
                        float* y, size_t batch);
  /* Required. Row `row` of `weight` converted to f32 into `out` (dims[0] floats). */
  lpx_status* (*dequantize_row)(lpx_instance* instance, const lpx_tensor_view* weight, int64_t row,
                                float* out);
  /* Required. Called by the engine before decoding and whenever its limits grow;
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
  /* Required. out[i] = gelu(gate[i]) * up[i], gelu the tanh approximation of
   * lpx/kinds/transformer.h, in f32 or, where the backend reproduces llama.cpp's arithmetic
   * (the cpu backends with q8 activations), at its f16 precision: the gate and gelu each
   * rounded to f16, 0 for a gate <= -10 and the gate itself for one >= 10. out may alias
   * gate. */
  lpx_status* (*geglu)(lpx_instance* instance, const float* gate, const float* up, float* out,
                       size_t n);
  /* Required. Causal attention of one sequence's query rows over its paged KV cache. */
  lpx_status* (*attention)(lpx_instance* instance, const lpx_attention_args* args);
  /* Required. The lpx_model_feature bits this backend runs: through its per-op kernels (whose
   * arguments then honour them: window and softcap, rope n_rot 0 and attn_factor, geglu), or
   * through model_load. The host refuses a model needing any other bit before it loads
   * anything, naming the missing features. Must not fail, allocate or block. */
  uint64_t (*model_features)(lpx_instance* instance);

  /* Optional, all three or none (NULL for host-memory backends such as cpu): a backend with
   * its own device memory runs whole forward steps there. The engine then keeps only the KV
   * block bookkeeping and calls model_forward once per step instead of the per-op kernels
   * above (which such a backend still implements on host buffers, for tests and tools).
   * model_load checks the description before it allocates anything: LPX_ERR_UNSUPPORTED for a
   * feature, shape or type it cannot run (naming it), LPX_ERR_OUT_OF_MEMORY when weights + KV
   * cache + workspace do not fit, saying how much. `desc` and all it points to are
   * caller-owned and valid during the call only. */
  lpx_status* (*model_load)(lpx_instance* instance, const lpx_transformer_desc* desc,
                            lpx_device_model** out_model, lpx_device_model_info* out_info);
  lpx_status* (*model_forward)(lpx_instance* instance, lpx_device_model* model,
                               const lpx_forward_args* args);
  /* Frees everything model_load took, waiting for any step still queued. NULL is a no-op. */
  void (*model_free)(lpx_instance* instance, lpx_device_model* model);

  /* since 2.8. Optional, both or neither, only beside the three above: queued steps, so the
   * device never waits for the host between decode steps. model_enqueue checks `args` as
   * model_forward does and returns once the step is queued (a backend may also run it there:
   * a model_enqueue that fails queues nothing); everything `args` points to is
   * read before it returns, except `argmax`, which the step writes and which must stay valid
   * until the model_wait that completes it. Token ids only: `argmax` set, `logits` NULL
   * (LPX_ERR_INVALID_ARGUMENT otherwise). At most two steps are queued at a time: a third,
   * or a model_forward while one is queued, is refused with LPX_ERR_CONFLICT. A backend may
   * run a step at any time between its model_enqueue and its model_wait, in queue order.
   * model_wait completes the oldest queued step: returns when its argmax is written, or with
   * its failure; a step queued after a failed one fails too (its inputs may be the failed
   * one's picks), each reported by its own model_wait. LPX_ERR_CONFLICT when none is queued.
   * A backend whose model_enqueue returns before the step has run declares the capability
   * "queued-steps"; hosts queue steps only on those (the SDK's defaults run the step inside
   * model_enqueue: correct, with nothing to overlap). */
  lpx_status* (*model_enqueue)(lpx_instance* instance, lpx_device_model* model,
                               const lpx_forward_args* args);
  lpx_status* (*model_wait)(lpx_instance* instance, lpx_device_model* model);
} lpx_quant_backend_api;

#ifdef __cplusplus
}
#endif

#endif
