// Attention of one query row over the paged f16 KV cache, in the reference engine's arithmetic
// (its non-flash path): q rounded to f16; scores q.k in f32 (dot order: ops_arithmetic.hpp),
// times scale; the softmax over groups of 8 with the exp approximation, each group's sum folded
// into a double; probabilities rounded to f16; the weighted sum of v in the same dot order
// family. The reference engine pads the context to a multiple of 256 with masked positions;
// their probabilities are exactly 0 and change none of the sums, so they are skipped here
// (their lanes of the partial last group simply stay 0).
//
// A window masks the positions before the row's first_attended one the same way: they weigh
// exactly 0, are skipped, and every sum keeps its groups and lanes (indexed by the absolute
// position t), so a window changes nothing else. A soft cap bends each scaled score to
// softcap * tanh(score * (1 / softcap)) (C library tanhf) before the softmax.
#include <cmath>
#include <limits>

#include "reference/half_precision.hpp"
#include "reference/ops.hpp"
#include "reference/ops_arithmetic.hpp"

namespace lpx::kernels::reference {
namespace {

constexpr std::size_t kSoftmaxGroup = 8;

std::size_t round_up(std::size_t n, std::size_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

// Start of position t's vector for kv head `kv_head` in a cache pool.
const std::uint16_t* cache_row(const lpx_attention_args& args, const std::uint16_t* pool,
                               std::size_t t, std::uint32_t kv_head) {
  const auto block = static_cast<std::size_t>(args.block_table[t / args.block_size]);
  const std::size_t slot = block * args.block_size + t % args.block_size;
  return pool + (slot * args.n_kv_heads + kv_head) * args.head_dim;
}

}  // namespace

std::uint32_t first_attended(std::int32_t position, std::uint32_t window) noexcept {
  const auto p = static_cast<std::uint32_t>(position);
  return window == 0 || p < window ? 0 : p - window + 1;
}

std::size_t attention_scratch_floats(std::uint32_t max_context) noexcept {
  return round_up(max_context, kSoftmaxGroup);
}

void attention_row(const lpx_attention_args& args, std::uint32_t row, std::uint32_t head_begin,
                   std::uint32_t head_end, float* scratch) noexcept {
  const auto n = static_cast<std::size_t>(args.positions[row]) + 1;
  const std::size_t first = first_attended(args.positions[row], args.window);
  const std::size_t dim = args.head_dim;
  const std::uint32_t group = args.n_heads / args.n_kv_heads;
  const DotOrder qk_order = qk_dot_order(args.n_rows, args.head_dim);
  const DotOrder pv_order = pv_dot_order(args.n_rows, args.head_dim);
  const std::size_t pv_lanes = dot_lanes(pv_order);

  for (std::uint32_t h = head_begin; h < head_end; ++h) {
    const std::uint32_t kv_head = h / group;
    const float* q = args.q + (static_cast<std::size_t>(row) * args.n_heads + h) * dim;
    float* out = args.out + (static_cast<std::size_t>(row) * args.n_heads + h) * dim;

    // q rounded to f16 lives in the output head until the weighted sum overwrites it.
    for (std::size_t d = 0; d < dim; ++d) out[d] = f16_to_f32(f32_to_f16(q[d]));

    float* w = scratch;
    float max = -std::numeric_limits<float>::infinity();
    for (std::size_t t = first; t < n; ++t) {
      w[t] = dot_f16(qk_order, out, cache_row(args, args.k_cache, t, kv_head), dim) * args.scale;
      if (args.softcap > 0.0f) w[t] = args.softcap * std::tanh(w[t] * (1.0f / args.softcap));
      max = max > w[t] ? max : w[t];
    }

    // Groups of 8 aligned to position 0, as without a window: groups before `first` are all
    // zeros and add nothing.
    double sum = 0.0;
    const std::size_t begin = first - first % kSoftmaxGroup;
    const std::size_t padded = round_up(n, kSoftmaxGroup);
    for (std::size_t t = begin; t < padded; ++t) {
      w[t] = t >= first && t < n ? exp_approx(w[t] - max) : 0.0f;
    }
    for (std::size_t t = begin; t < padded; t += kSoftmaxGroup) {
      sum += static_cast<double>(hsum8(w + t));
    }
    const auto inv_sum = static_cast<float>(1.0 / sum);
    for (std::size_t t = first; t < n; ++t) w[t] = f16_to_f32(f32_to_f16(w[t] * inv_sum));

    for (std::size_t d = 0; d < dim; ++d) {
      float acc[32] = {};
      for (std::size_t t = first; t < n; ++t) {
        const float v = f16_to_f32(cache_row(args, args.v_cache, t, kv_head)[d]);
        acc[t % pv_lanes] = std::fma(v, w[t], acc[t % pv_lanes]);
      }
      out[d] = reduce_dot(pv_order, acc);
    }
  }
}

}  // namespace lpx::kernels::reference
