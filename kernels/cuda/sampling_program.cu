// On-GPU sampling programs (lpx/kinds/sampling_program.h): sample_rows runs one program per row
// of logits, one thread block per row, so that only the chosen token id leaves the device.
// kernels/reference/sampling_program.cpp is the ground truth.
//
// The algorithm is sampling_program_runner.cuh's Runner; this file answers its block-wide
// questions twice: with a thread block (DeviceBlock, the kernel) and with plain loops (HostBlock,
// sample_row_on_host). Every thread of a block runs the same Runner on block-wide results, so
// every thread reaches every barrier.
#include <lpx/kinds/sampling_program.h>

#include <cstdint>
#include <vector>

#include "cuda/dependent_launch.cuh"
#include "cuda/launch.hpp"
#include "cuda/sampling_program_runner.cuh"

namespace lpx::kernels::cuda::sampling {
namespace {

// 512, not 1024: at 1024 threads __launch_bounds__ caps a thread at 64 registers and ptxas spilled
// (~600 bytes stored, ~950 loaded, CUDA 13.0, sm_90); at 512 it uses 92 and spills nothing. No
// result depends on the count: every block-wide answer is a minimum, a maximum or an integer sum.
constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFullWarp = 0xFFFFFFFFu;
constexpr int kBucketsPerThread = kBuckets / kThreads;
constexpr int kLoadsInFlight = 4;                   // per thread, in a pass over the row
static_assert(kThreads % 32 == 0 && kBuckets % kThreads == 0);

// --- the device: one thread block per row --------------------------------------------------

struct SharedScratch {
  u64 weights[kBuckets];
  std::uint32_t counts[kBuckets];
  std::int32_t list[kListCapacity];
  u64 warp_totals[2][kWarps];
  Crossing crossing;
  int list_size;
};

class DeviceBlock {
 public:
  __device__ explicit DeviceBlock(SharedScratch& s) : s_(s) {}

  __device__ u64 min_key(const View& view) {
    u64 least = kAllKeys;
    for_each_candidate(view, [&](const Candidate& c) {
      if (c.key < least) least = c.key;
    });
    return block_reduce(least, [](u64 a, u64 b) { return a < b ? a : b; });
  }

  __device__ double sum_exp(const View& view, float first_value) {
    Fixed128 sum;
    for_each_candidate(view, [&](const Candidate& c) {
      sum = plus(sum, to_fixed(softmax_term(current_value(view, c.order_value), first_value)));
    });
    for (int offset = 16; offset > 0; offset /= 2) {
      Fixed128 other;
      other.hi = __shfl_xor_sync(kFullWarp, sum.hi, offset);
      other.lo = __shfl_xor_sync(kFullWarp, sum.lo, offset);
      sum = plus(sum, other);
    }
    if (lane() == 0) {
      s_.warp_totals[0][warp()] = sum.hi;
      s_.warp_totals[1][warp()] = sum.lo;
    }
    __syncthreads();
    Fixed128 total;
    for (int w = 0; w < kWarps; ++w) {
      Fixed128 part;
      part.hi = s_.warp_totals[0][w];
      part.lo = s_.warp_totals[1][w];
      total = plus(total, part);
    }
    __syncthreads();
    return to_double(total);
  }

  __device__ AtLeast count_at_least(const View& view, double threshold) {
    u64 count = 0;
    u64 last = 0;
    for_each_candidate(view, [&](const Candidate& c) {
      if (static_cast<double>(current_value(view, c.order_value)) >= threshold) {
        ++count;
        if (c.key > last) last = c.key;
      }
    });
    AtLeast result;
    result.count = static_cast<std::uint32_t>(block_reduce(count, [](u64 a, u64 b) { return a + b; }));
    result.last_key = block_reduce(last, [](u64 a, u64 b) { return a > b ? a : b; });
    return result;
  }

  __device__ void histogram(const View& view, u64 prefix, Digits digits, const Weighting& w) {
    for (int b = threadIdx.x; b < kBuckets; b += kThreads) {
      s_.counts[b] = 0;
      s_.weights[b] = 0;
    }
    __syncthreads();
    for_each_candidate(view, [&](const Candidate& c) {
      if (!under_prefix(c.key, prefix, digits.high)) return;
      const std::uint32_t digit = digit_of(c.key, digits);
      atomicAdd(&s_.counts[digit], 1u);
      if (w.by_mass) atomicAdd(&s_.weights[digit], weight_of(view, w, c.order_value));
    });
    __syncthreads();
  }

  // A block-wide scan of the buckets; each thread owns kBucketsPerThread consecutive ones.
  __device__ Crossing choose_bucket(const Weighting& w, const Target& target, u64 weight_before) {
    const int first_bucket = threadIdx.x * kBucketsPerThread;
    u64 count = 0;
    u64 weight = 0;
    for (int b = first_bucket; b < first_bucket + kBucketsPerThread; ++b) {
      count += s_.counts[b];
      weight += bucket_weight(w, b);
    }
    u64 count_through = count;  // inclusive scan within the warp
    u64 weight_through = weight;
    for (int offset = 1; offset < 32; offset *= 2) {
      const u64 lower_count = __shfl_up_sync(kFullWarp, count_through, offset);
      const u64 lower_weight = __shfl_up_sync(kFullWarp, weight_through, offset);
      if (lane() >= offset) {
        count_through += lower_count;
        weight_through += lower_weight;
      }
    }
    if (lane() == 31) {
      s_.warp_totals[0][warp()] = count_through;
      s_.warp_totals[1][warp()] = weight_through;
    }
    if (threadIdx.x == 0) s_.crossing.found = false;
    __syncthreads();
    u64 count_below = count_through - count;  // this thread's buckets: what lies below them
    u64 weight_below = weight_through - weight;
    u64 total = 0;
    for (int i = 0; i < kWarps; ++i) {
      if (i < warp()) {
        count_below += s_.warp_totals[0][i];
        weight_below += s_.warp_totals[1][i];
      }
      total += s_.warp_totals[1][i];
    }
    const u64 units = target.resolve(total);
    // Deeper levels: the chosen bucket held more than weight_before, so need >= 1.
    const u64 need = units > weight_before ? units - weight_before : 1;
    if (need <= total) {
      for (int b = first_bucket; b < first_bucket + kBucketsPerThread; ++b) {
        const u64 bucket = bucket_weight(w, b);
        if (weight_below < need && need <= weight_below + bucket) {  // true for one bucket
          Crossing& c = s_.crossing;
          c.found = true;
          c.digit = static_cast<std::uint32_t>(b);
          c.count_before = static_cast<std::uint32_t>(count_below);
          c.weight_before = weight_below;
          c.bucket_count = s_.counts[b];
          c.units = units;
        }
        count_below += s_.counts[b];
        weight_below += bucket;
      }
    }
    __syncthreads();
    const Crossing crossing = s_.crossing;
    __syncthreads();
    return crossing;
  }

  // Only from the row (the list is where the result goes).
  __device__ View gather(const View& view, u64 prefix, int high) {
    if (threadIdx.x == 0) s_.list_size = 0;
    __syncthreads();
    for_each_candidate(view, [&](const Candidate& c) {
      if (!under_prefix(c.key, prefix, high)) return;
      const int slot = atomicAdd(&s_.list_size, 1);
      if (slot < kListCapacity) s_.list[slot] = id_of(c.key, view.id_bits);  // they fit
    });
    __syncthreads();
    View gathered = view;
    gathered.list = s_.list;
    gathered.list_size = s_.list_size < kListCapacity ? s_.list_size : kListCapacity;
    __syncthreads();
    return gathered;
  }

 private:
  __device__ static int lane() { return static_cast<int>(threadIdx.x) % 32; }
  __device__ static int warp() { return static_cast<int>(threadIdx.x) / 32; }

  __device__ u64 bucket_weight(const Weighting& w, int b) const {
    return w.by_mass ? s_.weights[b] : u64{s_.counts[b]};
  }

  // f(candidate) for this thread's share of the candidates.
  template <class F>
  __device__ static void for_each_candidate(const View& view, F&& f) {
    Candidate c;
    if (view.list != nullptr) {
      for (int j = threadIdx.x; j < view.list_size; j += kThreads) {
        const std::int32_t id = view.list[j];
        if (make_candidate(view, id, view.row[id], &c)) f(c);
      }
      return;
    }
    // The row: kLoadsInFlight loads issued before any is used, to keep the memory busy.
    for (int base = threadIdx.x; base < view.n; base += kThreads * kLoadsInFlight) {
      float raw[kLoadsInFlight];
#pragma unroll
      for (int k = 0; k < kLoadsInFlight; ++k) {
        const int i = base + k * kThreads;
        raw[k] = i < view.n ? view.row[i] : 0.0f;
      }
#pragma unroll
      for (int k = 0; k < kLoadsInFlight; ++k) {
        const int i = base + k * kThreads;
        if (i < view.n && make_candidate(view, i, raw[k], &c)) f(c);
      }
    }
  }

  template <class Op>
  __device__ u64 block_reduce(u64 v, Op op) {
    for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(kFullWarp, v, offset));
    if (lane() == 0) s_.warp_totals[0][warp()] = v;
    __syncthreads();
    u64 result = s_.warp_totals[0][0];
    for (int w = 1; w < kWarps; ++w) result = op(result, s_.warp_totals[0][w]);
    __syncthreads();
    return result;
  }

  SharedScratch& s_;
};

__global__ void __launch_bounds__(kThreads)
    sample_rows_kernel(const float* logits, int n, const lpx_sampling_program* programs,
                       std::int32_t* out) {
  __shared__ SharedScratch scratch;
  __shared__ lpx_sampling_program program;
  __shared__ float temperatures[LPX_SAMPLING_MAX_OPS];
  detail::allow_next_kernel();  // launched as a dependent (dependent_launch.cuh)
  if (threadIdx.x == 0) {  // an uploaded input: read while the head GEMV finishes
    program = programs[blockIdx.x];
    collect_temperatures(program, temperatures);
  }
  detail::wait_for_previous_kernel();  // the logits
  __syncthreads();
  DeviceBlock block(scratch);
  Runner<DeviceBlock> runner(block, logits + static_cast<std::size_t>(blockIdx.x) * n, n,
                             temperatures);
  const std::int32_t token = runner.run(program);
  if (threadIdx.x == 0) out[blockIdx.x] = token;
}

// --- the host: the same questions as plain loops --------------------------------------------

class HostBlock {
 public:
  u64 min_key(const View& view) const {
    u64 least = kAllKeys;
    for_each_candidate(view, [&](const Candidate& c) {
      if (c.key < least) least = c.key;
    });
    return least;
  }

  double sum_exp(const View& view, float first_value) const {
    Fixed128 sum;
    for_each_candidate(view, [&](const Candidate& c) {
      sum = plus(sum, to_fixed(softmax_term(current_value(view, c.order_value), first_value)));
    });
    return to_double(sum);
  }

  AtLeast count_at_least(const View& view, double threshold) const {
    AtLeast result;
    for_each_candidate(view, [&](const Candidate& c) {
      if (static_cast<double>(current_value(view, c.order_value)) >= threshold) {
        ++result.count;
        if (c.key > result.last_key) result.last_key = c.key;
      }
    });
    return result;
  }

  void histogram(const View& view, u64 prefix, Digits digits, const Weighting& w) {
    counts_.assign(kBuckets, 0);
    weights_.assign(kBuckets, 0);
    for_each_candidate(view, [&](const Candidate& c) {
      if (!under_prefix(c.key, prefix, digits.high)) return;
      const std::uint32_t digit = digit_of(c.key, digits);
      ++counts_[digit];
      weights_[digit] += weight_of(view, w, c.order_value);
    });
  }

  Crossing choose_bucket(const Weighting& w, const Target& target, u64 weight_before) const {
    u64 total = 0;
    for (int b = 0; b < kBuckets; ++b) total += bucket_weight(w, b);
    Crossing crossing{};
    crossing.units = target.resolve(total);
    const u64 need = crossing.units > weight_before ? crossing.units - weight_before : 1;
    if (need > total) return crossing;
    u64 weight_below = 0;
    std::uint32_t count_below = 0;
    for (int b = 0; b < kBuckets; ++b) {
      const u64 bucket = bucket_weight(w, b);
      if (need <= weight_below + bucket) {
        crossing.found = true;
        crossing.digit = static_cast<std::uint32_t>(b);
        crossing.count_before = count_below;
        crossing.weight_before = weight_below;
        crossing.bucket_count = counts_[b];
        return crossing;
      }
      weight_below += bucket;
      count_below += counts_[b];
    }
    return crossing;  // not reached: need <= total
  }

  View gather(const View& view, u64 prefix, int high) {
    list_.clear();
    for_each_candidate(view, [&](const Candidate& c) {
      if (under_prefix(c.key, prefix, high)) list_.push_back(id_of(c.key, view.id_bits));
    });
    View gathered = view;
    gathered.list = list_.data();
    gathered.list_size = static_cast<int>(list_.size());
    return gathered;
  }

 private:
  u64 bucket_weight(const Weighting& w, int b) const {
    return w.by_mass ? weights_[b] : u64{counts_[b]};
  }

  template <class F>
  static void for_each_candidate(const View& view, F&& f) {
    Candidate c;
    if (view.list != nullptr) {
      for (int j = 0; j < view.list_size; ++j) {
        const std::int32_t id = view.list[j];
        if (make_candidate(view, id, view.row[id], &c)) f(c);
      }
      return;
    }
    for (int i = 0; i < view.n; ++i) {
      if (make_candidate(view, i, view.row[i], &c)) f(c);
    }
  }

  std::vector<std::uint32_t> counts_ = std::vector<std::uint32_t>(kBuckets);
  std::vector<u64> weights_ = std::vector<u64>(kBuckets);
  std::vector<std::int32_t> list_;
};

}  // namespace
}  // namespace lpx::kernels::cuda::sampling

namespace lpx::kernels::cuda {

void sample_rows(const float* logits, int rows, int n, const lpx_sampling_program* programs,
                 std::int32_t* out, cudaStream_t stream) {
  if (rows <= 0 || n <= 0) return;  // no token to give
  detail::launch_dependent(sampling::sample_rows_kernel, dim3(rows), dim3(sampling::kThreads),
                           stream, logits, n, programs, out);
}

std::int32_t sample_row_on_host(const float* logits, int n, const lpx_sampling_program& program) {
  if (n <= 0) return -1;
  float temperatures[LPX_SAMPLING_MAX_OPS] = {};
  sampling::collect_temperatures(program, temperatures);
  sampling::HostBlock block;
  sampling::Runner<sampling::HostBlock> runner(block, logits, n, temperatures);
  return runner.run(program);
}

}  // namespace lpx::kernels::cuda
