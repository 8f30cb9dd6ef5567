// The CUDA kernel set of the decode step, as host-callable launchers. Each launcher enqueues
// its kernel(s) on `stream` and returns at once: no allocation, no synchronisation, so a whole
// decode step can be captured into a CUDA graph. Launch errors surface through
// cudaGetLastError() / the stream, which the caller checks once per step.
//
// Every pointer is device memory unless its comment says otherwise. Shapes follow the CPU
// engine: activations are row-major f32 rows; weights keep the GGUF block layout, one weight
// row (output feature) after another; the KV cache is the engine's paged pool of f16 blocks
// (lpx_attention_args in lpx/kinds/quant_backend.h describes the layout).
//
// Arithmetic: the f32-activation contract of quant_backend.h (weights dequantized exactly,
// activations f32, f32 accumulation) up to summation order; the KV cache holds f16.
// kernels/reference is the ground truth the tests hold every launcher to.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <lpx/kinds/sampling_program.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lpx::kernels::cuda {

// A weight matrix resident on the device.
struct DeviceWeight {
  std::int32_t type = 0;       // an lpx_tensor_type
  const void* data = nullptr;  // rows x row_bytes bytes, device
  std::int64_t rows = 0;       // output features (GGUF dims[1])
  std::int64_t columns = 0;    // input features (GGUF dims[0]); a whole number of blocks
  std::size_t row_bytes = 0;
};

// --- kernel overlap (dependent_launch.cu) ---------------------------------------------------

// Lets the decode kernels (gemv, rope_and_store, attention) start while the kernel before them
// on their stream finishes, each waiting inside for the results it reads (programmatic
// dependent launch): the launch gaps of a decode step shrink, the results stay the same. Needs
// a GPU of compute capability 9.0 or newer and this build's sm_90+ code for it (the current
// device is asked); returns whether it is now on. Process-wide; off until switched on.
bool set_kernel_overlap(bool enabled) noexcept;

// --- matrix-vector products (gemv.cu) -------------------------------------------------------

// Activation rows one GEMV thread block multiplies with each decoded weight (gemv() takes any
// batch; DeviceMatmul sends batches above 64 to cuBLAS).
inline constexpr int kMaxGemvBatch = 8;

// True for the weight types gemv and dequantize_rows_f16 handle: F32, F16, BF16, Q8_0, Q4_0,
// Q4_1, Q5_0, Q4_K, Q6_K.
bool gemv_supports(std::int32_t type) noexcept;

// y[b * w.rows + r] = sum_c W[r][c] * x[b * w.columns + c] for b < batch. Each weight block is
// decoded once for up to kMaxGemvBatch rows; larger batches run as groups of kMaxGemvBatch
// rows in one launch whose blocks for the same weight rows run side by side, so a weight comes
// from memory about once per call (later groups find it in L2). A row's result does not
// depend on the batch size. y must not alias x. An
// unsupported type fills y with NaN (the launchers return nothing; NaN cannot go unnoticed).
void gemv(const DeviceWeight& w, const float* x, float* y, int batch, cudaStream_t stream);

// What a gemv reads as activation row b, computed as the weights stream past.
struct GemvInput {
  const float* x = nullptr;  // batch rows of w.columns floats
  // When set, each row is RMS-normalised first, as add_rms_norm (without residual) would write
  // it: x * 1/sqrt(mean(x^2) + eps) * norm_weight. The squares are summed (in double) while x
  // streams past and the scale multiplies the finished dot product, so this costs no pass of
  // its own; the result differs from norm-then-gemv by rounding only (bound in gemv.cu).
  const float* norm_weight = nullptr;  // w.columns floats
  float norm_eps = 0.0f;
};

// A weight may be several matrices stacked by rows (a layer's q, k and v, sharing type and
// columns), multiplied in one launch: part p's rows go to its own buffer, plus its bias.
inline constexpr int kMaxGemvParts = 3;
struct GemvPart {
  float* y = nullptr;           // batch rows of `rows` floats
  std::int64_t rows = 0;        // output rows of this part
  const float* bias = nullptr;  // `rows` floats added to every output row, or null
};
// How the products reach memory; value = dot (scaled, with a norm input) + the part's bias.
enum class GemvStore : std::int32_t {
  kWrite,       // y = value
  kAccumulate,  // y = y + value: a projection joining the residual stream
  // The weight's rows interleave two matrices, gate and up (row 2j is gate row j, row 2j + 1
  // up row j); one part of w.rows / 2 rows, no bias: y[j] = silu(gate_j) * up_j, element j
  // of a row as swiglu() computes it for a row of w.rows / 2.
  kSwigluPairs,
  // As kSwigluPairs with GeGLU: y[j] = gelu_tanh(gate_j) * up_j, as geglu() computes it.
  kGegluPairs,
};
// Whether products of `store` are gate/up pairs (one part of half the weight's rows).
__host__ __device__ inline bool stores_pairs(GemvStore store) {
  return store == GemvStore::kSwigluPairs || store == GemvStore::kGegluPairs;
}
struct GemvOutput {
  GemvPart parts[kMaxGemvParts];
  int count = 0;  // 1..kMaxGemvParts; the parts' rows add up to w.rows (kSwigluPairs: one part)
  GemvStore store = GemvStore::kWrite;
  // The output head's logit scale and final soft cap, applied to each value after its bias
  // with scale_and_cap's arithmetic: value * scale (when not 1), then softcap * tanh(value /
  // softcap) (when > 0). Not with gate/up pairs.
  float scale = 1.0f;
  float softcap = 0.0f;
  // When set (one kWrite part): greedy picking fused into the product. For each activation row
  // b, argmax_keys[b] becomes the atomic maximum of its own value and argmax_key(value, row)
  // over the row's stored values; it must hold 0 before the call, and argmax_finish() turns it
  // into the token and puts the 0 back. Up to DeviceMatmul::kGemvRows rows (no cuBLAS path).
  unsigned long long* argmax_keys = nullptr;
};
// One output buffer y of `rows` rows per activation row (plus its bias), stored as `store` says.
inline GemvOutput single_gemv_output(float* y, std::int64_t rows, const float* bias = nullptr,
                                     GemvStore store = GemvStore::kWrite) {
  GemvOutput out;
  out.parts[0] = {y, rows, bias};
  out.count = 1;
  out.store = store;
  return out;
}
// As gemv above, with `in`'s activations and output row r of the stack going to the part
// holding it: parts[p].y[b * parts[p].rows + (r - rows of the parts before p)]. Outputs that
// do not match the weight (or an unsupported type) fill every part with NaN.
void gemv(const DeviceWeight& w, const GemvInput& in, const GemvOutput& out, int batch,
          cudaStream_t stream);
void gemv(const DeviceWeight& w, const float* x, const GemvOutput& out, int batch,
          cudaStream_t stream);

// Rows [row_begin, row_begin + rows) of w dequantized to f16, row-major (rows x w.columns),
// into `out`: the A operand of the cuBLAS path for prefill and large batches.
void dequantize_rows_f16(const DeviceWeight& w, std::int64_t row_begin, std::int64_t rows,
                         __half* out, cudaStream_t stream);

// out[i * w.columns ...] = row tokens[i] of w dequantized to f32, for i < n: the embedding
// (and, with tokens = 0, 1, 2..., the dequantization of rows for cuBLAS). A token outside
// [0, w.rows) gives a row of NaN.
void embed_rows(const DeviceWeight& w, const std::int32_t* tokens, int n, float* out,
                cudaStream_t stream);
// The same, where a token -(o + 1) stands for previous_picks[o] (device): a queued step's row
// whose token is the step before's pick (lpx_forward_args.previous_outputs). The caller stages
// only such o as that step picked (the host checks every other token against the vocabulary).
void embed_rows(const DeviceWeight& w, const std::int32_t* tokens,
                const std::int32_t* previous_picks, int n, float* out, cudaStream_t stream);

// out[i] = half(x[i]) for i < n.
void f32_to_f16(const float* x, __half* out, std::size_t n, cudaStream_t stream);

// out[i * width + j] = x[rows[i] * width + j] for i < n (gather.cu): the rows whose logits
// are wanted.
void gather_rows(const float* x, const std::int32_t* rows, int n, int width, float* out,
                 cudaStream_t stream);

// cudaSuccess when this build carries a kernel image (SASS or JIT-able PTX) for the current
// device; cudaErrorNoKernelImageForDevice (or the driver's error) otherwise.
cudaError_t probe_kernel_image() noexcept;

// --- element-wise and row kernels (ops.cu) --------------------------------------------------

// x[r * n + i] += scale * y'[r * n + i], row by row (rows x n), where y' is y normalised as
// rms_norm writes it when norm_weight is set, else y: a block's output joining the residual
// stream through a post-norm (Gemma) and/or a residual scale (Granite). y is not written.
void add_residual(float* x, const float* y, const float* norm_weight, float scale, int rows,
                  int n, float eps, cudaStream_t stream);

// x[i] = scale * x[i], then, when softcap > 0, x[i] = softcap * tanh(x[i] * (1 / softcap)), for
// i < n: the embedding scale, and the logit scale and final soft cap.
void scale_and_cap(float* x, std::size_t n, float scale, float softcap, cudaStream_t stream);

// When residual != nullptr: x += residual first (the block's output joins the residual
// stream). Then out = x * 1/sqrt(mean(x^2) + eps) * weight, row by row; rows x n. out must
// not alias x when residual is set.
void add_rms_norm(float* x, const float* residual, const float* weight, float* out, int rows,
                  int n, float eps, cudaStream_t stream);

// add_rms_norm without the residual: out = x normalised, row by row; x is not written.
void rms_norm(const float* x, const float* weight, float* out, int rows, int n, float eps,
              cudaStream_t stream);

// x[r * width + i] += bias[i].
void add_bias(float* x, const float* bias, int rows, int width, cudaStream_t stream);

// x[i] += y[i] for i < n.
void add_in_place(float* x, const float* y, std::size_t n, cudaStream_t stream);

// out[i] = silu(gate[i]) * up[i] for i < n; out may alias gate.
void swiglu(const float* gate, const float* up, float* out, std::size_t n, cudaStream_t stream);

// out[r * n + j] = silu(pairs[r * 2n + 2j]) * pairs[r * 2n + 2j + 1] for r < rows, j < n: the
// products of an interleaved gate/up weight (GemvStore::kSwigluPairs) when they were computed
// apart (cuBLAS), element j treated as swiglu() treats it for a row of n. out must not alias
// pairs.
void swiglu_pairs(const float* pairs, float* out, int rows, int n, cudaStream_t stream);

// out[i] = gelu_tanh(gate[i]) * up[i] for i < n, as reference::geglu (tanh correctly rounded
// where the reference calls tanhf); out may alias gate.
void geglu(const float* gate, const float* up, float* out, std::size_t n, cudaStream_t stream);
// swiglu_pairs with GeGLU.
void geglu_pairs(const float* pairs, float* out, int rows, int n, cudaStream_t stream);

struct RopeArgs {
  int mode = 0;  // an lpx_rope_mode
  int n_rot = 0;
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;
  const float* freq_factors = nullptr;  // n_rot / 2 divisors, or null
  float attn_factor = 1.0f;             // cos and sin times this (0 reads as 1)
};
// Rotates in place the first n_rot dims of every head of x (rows x heads x head_dim); row r is
// at cache position positions[r]. n_rot 0 rotates nothing.
void rope(float* x, int rows, int heads, int head_dim, const std::int32_t* positions,
          const RopeArgs& args, cudaStream_t stream);

struct RopeStoreArgs {
  float* q = nullptr;  // rows x q_heads x head_dim, rotated in place
  float* k = nullptr;  // rows x kv_heads x head_dim, rotated in place
  const float* v = nullptr;
  int rows = 0, q_heads = 0, kv_heads = 0, head_dim = 0;
  const std::int32_t* positions = nullptr;  // rows cache positions
  std::uint16_t* k_pool = nullptr;          // f16 pools, kv_heads * head_dim values per slot
  std::uint16_t* v_pool = nullptr;
  const std::int32_t* slots = nullptr;      // rows slots; a negative slot stores nothing
  // When set, each head of q (k) is RMS-normalised with these head_dim weights before it is
  // rotated, as rms_norm over rows of head_dim would write it (Qwen3, Gemma 3).
  const float* q_norm = nullptr;
  const float* k_norm = nullptr;
  float norm_eps = 0.0f;
};
// The q/k norms, rope(q), rope(k) (none for n_rot 0), then kv_store(k, v) in one launch: the
// attention prologue of a decode step, one thread block per (row, head). Bit for bit the
// separate kernels' results without norms; with them, each normalised head within rms_norm's
// 2 ulp (its sums add in another order). q_heads + kv_heads above 65535 is refused.
void rope_and_store(const RopeStoreArgs& a, const RopeArgs& args, cudaStream_t stream);

// --- paged KV cache and attention (attention.cu) --------------------------------------------

// Writes row r of k and v (each `width` = n_kv_heads x head_dim f32) as f16 into slot
// slots[r] of the pools (slot s = block * block_size + position % block_size; a slot holds
// `width` values).
void kv_store(const float* k, const float* v, std::uint16_t* k_pool, std::uint16_t* v_pool,
              const std::int32_t* slots, int rows, int width, cudaStream_t stream);

struct AttentionArgs {
  const float* q = nullptr;                   // n_rows x n_heads x head_dim f32
  float* out = nullptr;                       // n_rows x n_heads x head_dim f32
  const std::int32_t* positions = nullptr;    // per row: attends to positions 0..p (window)
  const std::int32_t* row_sequence = nullptr; // per row: its sequence's index
  const std::int32_t* block_tables = nullptr; // per sequence: block_table_stride blocks
  int block_table_stride = 0;
  int n_rows = 0;
  int n_heads = 0;
  int n_kv_heads = 0;
  int head_dim = 0;  // 64, 80, 96, 128, 256 (flash-decoding); other sizes up to 1024 take a
                     // simple correct kernel (attention_generic.cu)
  float scale = 1.0f;
  // Attended positions, the row's own included: p - window + 1 .. p (0: all, 0 .. p).
  int window = 0;
  // > 0: each scaled score becomes softcap * tanh(score * (1 / softcap)) (Gemma 2).
  float softcap = 0.0f;
  const std::uint16_t* k_pool = nullptr;  // this layer's K blocks, f16
  const std::uint16_t* v_pool = nullptr;
  int block_size = 16;
  // Split-K flash-decoding: a row's attended positions are cut into at most `splits` chunks of
  // equal length (a multiple of 32), one thread block per (row, kv head, split); the chunk that
  // finishes last merges them (a row within one chunk needs no merge). The grid is
  // n_rows x n_kv_heads x splits whatever the positions, so a captured graph serves every
  // context length. A row's result depends on its positions and `splits`, not on the batch.
  int splits = 1;            // 1 .. kMaxAttentionSplits; see attention_splits()
  float* partial = nullptr;  // attention_partial_floats(n_rows, ...) floats (splits > 1)
  // n_rows x n_kv_heads counters of finished chunks: zero before the first call, and every
  // call leaves them zero (calls on one stream may share them). Unused when splits is 1.
  std::uint32_t* chunk_counters = nullptr;
};
inline constexpr int kMaxAttentionSplits = 64;
// The split count that fills a GPU of `multiprocessors` SMs at batch 1 (about two blocks per
// SM over the kv heads), at most kMaxAttentionSplits. A model keeps one value for every step.
int attention_splits(int multiprocessors, int n_kv_heads) noexcept;
// Scratch floats for up to max_rows rows (0 when splits is 1: nothing is merged).
std::size_t attention_partial_floats(int max_rows, int n_heads, int head_dim,
                                     int splits) noexcept;
void attention(const AttentionArgs& args, cudaStream_t stream);

// --- the persistent decode kernel (decode_megakernel.cu) ------------------------------------

// An option measured against the CUDA-graph path: a whole batch-1 greedy decode step in one
// cooperative launch whose blocks run the graph path's thread blocks as work items, phase by
// phase, with grid barriers between phases. The same code per work item: the same logits, bit
// for bit. Built for head size 64 and the weight formats megakernel_unsupported() names.

// One GEMV of the step: the weight, what it reads, where its products go (as gemv() takes them).
struct MegakernelGemv {
  DeviceWeight w;
  GemvInput in;
  GemvOutput out;
};
// One layer: stacked q/k/v (kWrite), interleaved gate/up (a pairs store), the output and down
// projections added to the residual stream (kAccumulate); rope_and_store's and attention()'s
// arguments for the step's one row (every pointer fixed at load: the step's inputs are views of
// the model's input buffer).
struct MegakernelLayer {
  MegakernelGemv qkv, o, gate_up, down;
  RopeStoreArgs rope;
  RopeArgs rope_args;
  AttentionArgs attention;
};
struct MegakernelStep {
  DeviceWeight token_embd;
  const std::int32_t* tokens = nullptr;  // the step's one token (device)
  const std::int32_t* previous_picks = nullptr;  // a token -(o + 1) is previous_picks[o]
  float* x = nullptr;                    // the residual stream, n_embd floats
  MegakernelGemv head;                   // out.argmax_keys set: the greedy pick
  std::int32_t* picked = nullptr;        // the token picked (device)
  int n_layers = 0;
};
// What the launch needs, from megakernel_prepare().
struct MegakernelLaunch {
  const void* kernel = nullptr;
  int grid = 0;  // every block resident: multiprocessors x blocks per SM
  cudaError_t status = cudaSuccess;
};
// Why the persistent kernel cannot run this model ("" when it can): weight types it is not
// built for, mixed types, head sizes, unaligned data, post-norms or unstacked matrices.
std::string megakernel_unsupported(const MegakernelStep& step,
                                   const std::vector<MegakernelLayer>& layers);
// Device bytes of the plan megakernel_prepare writes.
std::size_t megakernel_plan_bytes(std::size_t n_layers) noexcept;
// Writes the plan (each GEMV's row blocks and arguments, each layer's rope shape) into `plan`
// and sizes the grid; once, at load, for a model megakernel_unsupported() accepts.
MegakernelLaunch megakernel_prepare(const MegakernelStep& step,
                                    const std::vector<MegakernelLayer>& layers, void* plan,
                                    int multiprocessors, cudaStream_t stream);
// One step: the error of the cooperative launch (e.g. too many blocks), else cudaSuccess.
cudaError_t decode_megakernel(const MegakernelStep& step, const void* plan,
                              const MegakernelLaunch& launch, cudaStream_t stream);

// --- sampling (sampling.cu) -----------------------------------------------------------------

// out[r] = the index of the largest logits[r * n + i] (the lowest index among equals).
void argmax_rows(const float* logits, int rows, int n, std::int32_t* out, cudaStream_t stream);
// The second half of a fused argmax (GemvOutput::argmax_keys): out[b] = the index keys[b]
// holds (argmax_rows' order: the lowest index of the largest value, NaN below every number;
// 0 for a key never raised, as argmax_rows gives for a row of NaNs), and keys[b] = 0 again,
// for b < rows. One small dependent launch.
void argmax_finish(unsigned long long* keys, int rows, std::int32_t* out, cudaStream_t stream);

// --- sampling programs (sampling_program.cu) ------------------------------------------------

// out[r] = the token programs[r] picks from row r of logits (rows x n, 1 <= n <= 2^30), as
// reference::run_sampling_program would; programs holds `rows` programs, each passing
// reference::check_sampling_program (an invalid one gives -1 where the reference does, else
// some token in [0, n)). One thread block per row, no scratch memory. Deterministic: a row's token
// depends only on its logits and program, not on the other rows or on timing.
//
// Exactness: the reference's candidate order (equal logits by ascending id; +0 equals -0),
// temperatures (float divisions in program order) and probabilities (float(exp(l - max) / sum)).
// The softmax sum is exact (fixed point, then rounded) and running sums of probabilities are
// exact (2^-62 units), where the reference adds in double in candidate order; that can move one
// of its probabilities to the neighbouring float and its running sums by n * 2^-53. So a top-p or
// dist decision can differ from the reference's only where the reference's running sum at the
// decision lies within 2^-22 * threshold + n * 2^-51 of its threshold (p, or uniform * the sum
// of the probabilities) -- far rarer than that bound suggests, as a probability moves only when
// the reference's own rounding carries it across a float boundary -- and a min-p decision only
// where a logit lies within 2 ulp (double) of the threshold (log may round the other way).
//
// Non-finite logits: -inf has probability 0. A NaN ranks after every number, has probability 0
// and fails min-p (the reference is undefined there). Where the largest current logit is +inf,
// or every candidate is -inf, the reference's probabilities are NaN: top-p keeps every
// candidate and dist picks the last, here too. At least one candidate always remains.
//
// Cost, per row, in passes over its n logits: greedy and temperature 0, one (the first candidate,
// found once); temperature T > 0, none; top-k, one radix descent (a pass per level: five for
// vocabularies above 4096 tokens); top-p and dist, one pass for the softmax sum and a descent;
// min-p, one pass (and a descent where min_keep decides). Candidates, or the part of them a
// descent has narrowed to, that number 1024 or fewer are gathered once into shared memory; later
// passes read only them.
void sample_rows(const float* logits, int rows, int n, const lpx_sampling_program* programs,
                 std::int32_t* out, cudaStream_t stream);

// sample_rows' algorithm on the host, for one row of n logits in host memory: the same keys,
// descents and integer sums, with the host's exp and log. It lets tests check the algorithm where
// no GPU is usable; it can differ from sample_rows only where exp or log round differently, within
// the bounds above.
std::int32_t sample_row_on_host(const float* logits, int n, const lpx_sampling_program& program);

}  // namespace lpx::kernels::cuda
