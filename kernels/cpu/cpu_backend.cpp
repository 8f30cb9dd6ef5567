// cpu: the fast CPU backend. The fastest kernel set the CPU runs (cpu/kernel_set.hpp: AVX-512,
// AVX2, or the portable reference kernels with a log line saying so; option `kernels` forces
// one), spread over a pool of worker threads,
// one per physical core by default. Every result is bit-identical to cpu-scalar's: the kernels
// compute the same arithmetic (kernels/reference), and work is split by output rows (matmul) or
// (query row, head) pairs (attention), never inside one sum, so the thread count changes speed
// only.
//
// Matmul activations (option `activations`): "i16" (default) rounds them to 16-bit blocks for
// the 32-element and Q4_K/Q5_K/Q6_K weight types (reference/matmul_i16.hpp) and runs f32 for
// the others; "q8" rounds them to the weight type's dot format, llama.cpp's arithmetic
// (reference/matmul.hpp); "f32" keeps them f32 against exactly dequantized weights
// (reference/matmul_f32.hpp). All three are bit-identical to cpu-scalar's.
//
// Memory: reserve() sizes the rounded-activation buffer (q8, i16), one decoded-row scratch per
// thread (f32, i16), and one attention scratch per thread; after it no kernel call allocates for
// work within the reserved limits (a call beyond them grows the buffers, which is a caller bug
// and is logged once).
#include <algorithm>
#include <cstdint>
#include <lpx/cpp/plugin.hpp>
#include <vector>

#include "cpu/backend_support.hpp"
#include "cpu/cache_aligned.hpp"
#include "cpu/cpu_features.hpp"
#include "cpu/kernel_set.hpp"
#include "cpu/thread_pool.hpp"
#include "reference/matmul.hpp"
#include "reference/matmul_f32.hpp"
#include "reference/ops.hpp"
#include "reference/quantize_activations.hpp"

namespace {

namespace cpu = lpx::kernels::cpu;
namespace reference = lpx::kernels::reference;

// The kernel set the `kernels` option names ("auto": the fastest this CPU runs); an error when
// it names one this CPU cannot run. Logs which was chosen, and why when auto ends up portable.
const cpu::KernelSet& choose_kernels(const lpx::Options& options) {
  const std::string requested = options.get_string("kernels");
  std::string why;
  const cpu::KernelSet* set = cpu::choose_kernel_set(requested, why);
  if (set == nullptr) throw lpx::Error(LPX_ERR_UNSUPPORTED, "kernels: " + why);
  if (requested == "auto" && std::string_view(set->name) == "portable") {
    lpx::log_info("this CPU lacks AVX2, FMA or F16C; using the portable kernels (slower)");
  }
  return *set;
}

// Below this many multiply-adds a matmul runs on the calling thread alone.
constexpr std::size_t kMinParallelWork = std::size_t{1} << 16;

class CpuBackend final : public lpx::QuantBackend {
 public:
  explicit CpuBackend(const lpx::Options& options)
      : kernels_(choose_kernels(options)),
        pool_(static_cast<std::size_t>(options.get_int("threads"))),
        activations_mode_(cpu::activations_of(options)) {
    lpx::log_debug(std::string(kernels_.name) + " kernels, " + std::to_string(pool_.size()) +
                   " threads, " + cpu::name_of(activations_mode_) + " activations");
  }

  bool supports_type(std::int32_t type) const noexcept override {
    return reference::is_valid_tensor_type(type);
  }

  void reserve(const lpx_backend_limits& limits) override {
    cpu::check_limits(limits);
    reserved_ = true;
    // Scratch of decoded weight rows (f32, and i16 which also runs f32 for some types), and
    // rounded activations (q8, i16).
    if (activations_mode_ != cpu::Activations::q8) {
      grow_dequantized(cpu::dequantized_row_capacity(limits.max_columns) * kernels_.f32_scratch_rows, false);
    }
    if (activations_mode_ != cpu::Activations::f32) {
      grow_activations(cpu::activation_capacity(limits.max_rows, limits.max_columns), false);
    }
    std::size_t attention_floats = kernels_.attention_scratch_floats(limits.max_context);
    lpx_attention_args widest{};  // the shape of the largest call: is it one for the block kernel?
    widest.n_rows = limits.max_rows;
    widest.head_dim = limits.head_dim;
    if (kernels_.attention_block != nullptr && kernels_.attention_block_takes(widest)) {
      attention_floats = std::max(attention_floats, kernels_.attention_block_scratch_floats(
                                                        limits.max_context, limits.head_dim));
    }
    grow_attention_scratch(attention_floats, false);
  }

  void matmul(const lpx_tensor_view& w, const float* x, float* y, std::size_t batch) override {
    const cpu::WeightLayout l = cpu::layout_of(w);
    if (batch == 0) return;
    if (cpu::runs_f32(activations_mode_, w.type)) return matmul_f32(w, l, x, y, batch);
    if (activations_mode_ == cpu::Activations::i16) return matmul_i16(w, l, x, y, batch);
    const std::size_t activation_bytes = reference::activation_row_bytes(w.type, l.columns);
    grow_activations(activation_bytes * batch, true);
    quantize(w.type, x, l.columns, batch, activation_bytes);
    const reference::MatmulArgs args{
        w.type, w.data, l.row_bytes, l.rows, l.columns, activations_.data(), batch, y};
    const std::size_t tasks = matmul_tasks(l, batch);
    auto task = [&](std::size_t t, std::size_t) noexcept {
      kernels_.dot_rows(args, cpu::split_point(l.rows, tasks, t, 4),
                        cpu::split_point(l.rows, tasks, t + 1, 4));
    };
    pool_.parallel_for(tasks, task);
  }

  void dequantize_row(const lpx_tensor_view& w, std::int64_t row, float* out) override {
    cpu::dequantize_weight_row(w, row, out);
  }

  void rms_norm(const float* x, const float* weight, float* out, std::size_t rows, std::size_t n,
                float eps) override {
    for_row_ranges(rows, [&](std::size_t begin, std::size_t end) noexcept {
      for (std::size_t r = begin; r < end; ++r) kernels_.rms_norm_row(x + r * n, weight, out + r * n, n, eps);
    });
  }

  void rope(float* x, std::size_t rows, std::size_t heads, std::size_t head_dim,
            const std::int32_t* positions, const lpx_rope_params& params) override {
    cpu::check_rope(params, head_dim);
    for_row_ranges(rows, [&](std::size_t begin, std::size_t end) noexcept {
      for (std::size_t r = begin; r < end; ++r) {
        kernels_.rope_row(x + r * heads * head_dim, heads, head_dim, positions[r], params);
      }
    });
  }

  void swiglu(const float* gate, const float* up, float* out, std::size_t n) override {
    for_element_ranges(n, [&](std::size_t begin, std::size_t end) noexcept {
      kernels_.swiglu(gate + begin, up + begin, out + begin, end - begin);
    });
  }

  void geglu(const float* gate, const float* up, float* out, std::size_t n) override {
    for_element_ranges(n, [&](std::size_t begin, std::size_t end) noexcept {
      // q8 activations are llama.cpp's arithmetic, whose GELU is f16-rounded.
      if (activations_mode_ != cpu::Activations::q8) {
        kernels_.geglu(gate + begin, up + begin, out + begin, end - begin);
      } else {
        reference::geglu_f16(gate + begin, up + begin, out + begin, end - begin);
      }
    });
  }

  std::uint64_t model_features() const noexcept override { return LPX_MODEL_FEATURES_2_0; }

  // Several rows (a prompt) with a head_dim the block kernel takes: blocks of rows x heads;
  // otherwise one task per (row, head). Each thread has its own scratch.
  void attention(const lpx_attention_args& a) override {
    const std::int64_t max_position = cpu::check_attention(a);
    if (max_position < 0) return;
    const auto context = static_cast<std::uint32_t>(max_position) + 1;
    if (kernels_.attention_block != nullptr && kernels_.attention_block_takes(a)) {
      return attention_blocked(a, context);
    }
    grow_attention_scratch(kernels_.attention_scratch_floats(context), true);
    const std::size_t heads = a.n_heads;
    auto task = [&](std::size_t t, std::size_t thread) noexcept {
      const auto row = static_cast<std::uint32_t>(t / heads);
      const auto head = static_cast<std::uint32_t>(t % heads);
      kernels_.attention_row(a, row, head, head + 1, scratch_.data() + thread * scratch_stride_);
    };
    pool_.parallel_for(std::size_t{a.n_rows} * heads, task);
  }

 private:
  // Tasks of up to kAttentionBlockQueries (row, head) pairs: a run of rows x the query heads
  // of one kv head (at most 4 of them; a wider group is cut into pieces), so the keys and
  // values a task reads serve every pair; fewer rows a task when that leaves under two tasks
  // a thread (a short call on many cores). The last rows go first: under the causal mask they
  // attend the most positions, and the pool hands tasks out in order.
  void attention_blocked(const lpx_attention_args& a, std::uint32_t context) {
    grow_attention_scratch(kernels_.attention_block_scratch_floats(context, a.head_dim), true);
    const std::uint32_t group = a.n_heads / a.n_kv_heads;
    const std::uint32_t heads_per_task = std::min<std::uint32_t>(group, 4);
    const std::uint32_t pieces = (group + heads_per_task - 1) / heads_per_task;
    const std::uint32_t head_tasks = a.n_kv_heads * pieces;
    const auto most_rows = static_cast<std::uint32_t>(cpu::kAttentionBlockQueries / heads_per_task);
    const auto wanted_tasks = static_cast<std::uint32_t>(2 * pool_.size());
    const std::uint32_t rows_per_task = std::clamp<std::uint32_t>(
        (a.n_rows * head_tasks + wanted_tasks - 1) / wanted_tasks, 1, most_rows);
    const std::uint32_t row_blocks = (a.n_rows + rows_per_task - 1) / rows_per_task;
    auto task = [&](std::size_t t, std::size_t thread) noexcept {
      const std::uint32_t block = row_blocks - 1 - static_cast<std::uint32_t>(t / head_tasks);
      const auto head_task = static_cast<std::uint32_t>(t % head_tasks);
      const std::uint32_t kv_head = head_task / pieces;
      const std::uint32_t head_begin = kv_head * group + head_task % pieces * heads_per_task;
      const std::uint32_t head_end = std::min(head_begin + heads_per_task, (kv_head + 1) * group);
      const std::uint32_t row_begin = block * rows_per_task;
      const std::uint32_t row_end = std::min(row_begin + rows_per_task, a.n_rows);
      kernels_.attention_block(a, row_begin, row_end, head_begin, head_end,
                               scratch_.data() + thread * scratch_stride_);
    };
    pool_.parallel_for(std::size_t{row_blocks} * head_tasks, task);
  }

  // x stays f32: each thread dequantizes into its own scratch (the K types, and every
  // quantized type when several activation rows share a decoded weight row).
  void matmul_f32(const lpx_tensor_view& w, const cpu::WeightLayout& l, const float* x, float* y,
                  std::size_t batch) {
    grow_dequantized(l.columns * kernels_.f32_scratch_rows, true);
    const reference::F32MatmulArgs args{w.type,    w.data, l.row_bytes, l.rows,
                                        l.columns, x,      batch,       y};
    const std::size_t tasks = matmul_tasks(l, batch);
    auto task = [&](std::size_t t, std::size_t thread) noexcept {
      kernels_.dot_rows_f32(args, cpu::split_point(l.rows, tasks, t, 4),
                            cpu::split_point(l.rows, tasks, t + 1, 4),
                            dequantized_.data() + thread * dequantized_stride_);
    };
    pool_.parallel_for(tasks, task);
  }

  // x rounded to int16 blocks, then integer dots against weight rows decoded in registers (one
  // activation row) or into each thread's scratch (several).
  void matmul_i16(const lpx_tensor_view& w, const cpu::WeightLayout& l, const float* x, float* y,
                  std::size_t batch) {
    grow_dequantized(l.columns * kernels_.f32_scratch_rows, true);
    const std::size_t activation_bytes = reference::i16_row_bytes(l.columns);
    grow_activations(activation_bytes * batch, true);
    for_row_ranges(batch, [&](std::size_t begin, std::size_t end) noexcept {
      kernels_.quantize_activations_i16(w.type, x + begin * l.columns, l.columns, end - begin,
                                        activations_.data() + begin * activation_bytes);
    });
    const reference::I16MatmulArgs args{w.type,    w.data, l.row_bytes,         l.rows,
                                        l.columns, activations_.data(), batch, y};
    const std::size_t tasks = matmul_tasks(l, batch);
    auto task = [&](std::size_t t, std::size_t thread) noexcept {
      kernels_.dot_rows_i16(args, cpu::split_point(l.rows, tasks, t, 4), cpu::split_point(l.rows, tasks, t + 1, 4),
                            dequantized_.data() + thread * dequantized_stride_);
    };
    pool_.parallel_for(tasks, task);
  }

  // Runs round(begin, end) over the activation rows [0, batch): on this thread for a few rows,
  // split across the pool for a long prompt (each row is rounded on its own, so the split
  // changes nothing).
  template <class Round>
  void for_row_ranges(std::size_t batch, Round round) noexcept {
    if (batch < 8 || pool_.size() == 1) return round(0, batch);
    const std::size_t tasks = std::min(batch, pool_.size());
    auto task = [&](std::size_t t, std::size_t) noexcept {
      round(cpu::split_point(batch, tasks, t), cpu::split_point(batch, tasks, t + 1));
    };
    pool_.parallel_for(tasks, task);
  }

  // Runs run(begin, end) over the elements [0, n) of an element-wise op: on this thread for a
  // decode step's few thousand, split across the pool for a prompt's. Split points are
  // multiples of 8, so the kernels' groups of 8 and their n % 8 tail (SwiGLU's) stay where an
  // unsplit call puts them.
  template <class Run>
  void for_element_ranges(std::size_t n, Run run) noexcept {
    constexpr std::size_t kMinParallelElements = 1 << 15;
    if (n < kMinParallelElements || pool_.size() == 1) return run(0, n);
    const std::size_t tasks = pool_.size();
    auto task = [&](std::size_t t, std::size_t) noexcept {
      run(cpu::split_point(n, tasks, t, 8), cpu::split_point(n, tasks, t + 1, 8));
    };
    pool_.parallel_for(tasks, task);
  }

  // x rounded to the dot format into activations_; a long prompt's rows are split across the
  // pool (each row is rounded on its own, so the split changes nothing).
  void quantize(std::int32_t type, const float* x, std::size_t columns, std::size_t batch,
                std::size_t activation_bytes) noexcept {
    for_row_ranges(batch, [&](std::size_t begin, std::size_t end) noexcept {
      kernels_.quantize_activations(type, x + begin * columns, columns, end - begin,
                                    activations_.data() + begin * activation_bytes);
    });
  }

  std::size_t matmul_tasks(const cpu::WeightLayout& l, std::size_t batch) const noexcept {
    const std::size_t work = l.rows * l.columns * batch;
    if (pool_.size() == 1 || work < kMinParallelWork) return 1;
    // A few chunks per thread, claimed in order, even out uneven progress; four rows at least,
    // matching the decode kernels' four-row tiles.
    return std::max<std::size_t>(1, std::min(pool_.size() * 4, (l.rows + 3) / 4));
  }

  void grow_activations(std::size_t bytes, bool in_kernel) {
    if (bytes <= activations_.size()) return;
    warn_unreserved(in_kernel);
    activations_.resize(bytes);
  }

  void grow_dequantized(std::size_t floats_per_thread, bool in_kernel) {
    if (floats_per_thread <= dequantized_stride_) return;
    warn_unreserved(in_kernel);
    constexpr std::size_t kLineFloats = cpu::kCacheLine / sizeof(float);
    dequantized_stride_ = (floats_per_thread + kLineFloats - 1) / kLineFloats * kLineFloats;
    dequantized_.assign(dequantized_stride_ * pool_.size(), 0.0f);
  }

  void grow_attention_scratch(std::size_t floats_per_thread, bool in_kernel) {
    if (floats_per_thread <= scratch_stride_) return;
    warn_unreserved(in_kernel);
    scratch_stride_ = floats_per_thread;
    scratch_.assign(scratch_stride_ * pool_.size(), 0.0f);
  }

  // Growing inside a kernel call after reserve() means the engine under-reserved: worth one
  // warning. Without any reserve() (tools, tests) buffers simply grow on first use.
  void warn_unreserved(bool in_kernel) {
    if (!in_kernel || !reserved_ || warned_) return;
    warned_ = true;
    lpx::log_warn("a kernel call exceeded the reserved limits and allocated");
  }

  const cpu::KernelSet& kernels_;
  cpu::ThreadPool pool_;
  const cpu::Activations activations_mode_;  // the `activations` option
  // q8, i16: the rounded x of the current matmul.
  std::vector<std::uint8_t, cpu::CacheAligned<std::uint8_t>> activations_;
  // f32, i16: pool_.size() decoded-row scratches, each a whole number of cache lines.
  std::vector<float, cpu::CacheAligned<float>> dequantized_;
  std::size_t dequantized_stride_ = 0;     // floats per thread
  std::vector<float> scratch_;             // pool_.size() attention scratches
  std::size_t scratch_stride_ = 0;
  bool reserved_ = false;
  bool warned_ = false;
};

constexpr lpx_option_spec kOptions[] = {
    lpx::in_range(lpx::option("threads", LPX_OPTION_INT, "0",
                              "Threads for the kernels, the engine's own included; 0 = one per "
                              "physical core"),
                  0, 256),
    cpu::kActivationsOption,
    lpx::option("kernels", LPX_OPTION_STRING, "\"auto\"",
                "Kernel library: auto (the fastest this CPU runs), avx512, avx2 or portable; "
                "all give the same bits"),
};

}  // namespace

LPX_PLUGIN_ENTRY() {
  return lpx::describe<CpuBackend>(
      {.name = "cpu",
       .version = "1.3.0",
       .license = "Apache-2.0",
       .description = "Multithreaded AVX-512 / AVX2 CPU kernels (portable fallback on other CPUs)",
       .options = kOptions,
       .capabilities = cpu::kCapabilities});
}
