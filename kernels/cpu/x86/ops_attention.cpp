// Attention of one query row over the paged f16 KV cache, bit for bit reference::attention_row.
// Query heads that share a kv head are processed together (up to kMaxBatch at a time), so each
// K and V row is fetched from memory once per batch rather than once per head:
//   - scores 4 positions at a time (their horizontal sums share the final hadds);
//   - the softmax 8 positions at a time;
//   - the weighted sum of v position by position into one accumulator row per dot lane (32 or
//     8: the dot order's accumulators), vectorised across head dims, then folded in the dot
//     order's reduction tree.
// Every operation, and the order of every sum, is the reference's; only the loops differ.
// With a window, only the positions inside it are read (the cache may hold nothing valid before
// them); the softmax runs over groups aligned as without a window (from the first attended
// position rounded down to 32, kMaxLanes, the positions below it at weight 0), and each
// position still lands in accumulator row t % lanes, so every sum sees what the reference's
// sees.
#include <immintrin.h>

#include "cpu/x86/attention_parts.hpp"
#include "cpu/x86/ops.hpp"
#include "cpu/x86/ops_simd.hpp"
#include "reference/ops.hpp"
#include "reference/ops_arithmetic.hpp"

namespace lpx::kernels::LPX_X86_ISA {
namespace {

using attention_parts::round_up;
using reference::DotOrder;

constexpr std::size_t kMaxBatch = 4;   // query heads sharing K/V rows per pass
constexpr std::size_t kMaxLanes = 32;  // accumulators of the k4x8 order
constexpr std::size_t kTileDims = 64;  // head dims accumulated per pass over the context
constexpr std::size_t kPrefetchAhead = 8;

std::size_t lanes_of(DotOrder order) { return order == DotOrder::k4x8 ? 32 : 8; }

std::size_t smaller(std::size_t a, std::size_t b) { return a < b ? a : b; }

// The scratch: kMaxBatch rows of softmax weights (each padded to a multiple of 32 floats), then
// each position's cache slot index as raw 32-bit words (memcpy'd: the storage is float).
struct Scratch {
  float* weights;
  std::size_t weights_stride;
  float* slot_words;

  float* weights_of(std::size_t head) const { return weights + head * weights_stride; }

  std::size_t slot(std::size_t t) const { return attention_parts::slot_at(slot_words, t); }
};

// Query heads [first, first + count) of one row, all reading the same kv head.
struct Batch {
  const std::uint16_t* k;  // the kv head's vector in slot 0 of the K pool
  const std::uint16_t* v;
  std::size_t stride;  // elements between consecutive slots
  std::size_t dim;
  std::size_t count;
  float* q[kMaxBatch];  // each head's q rounded to f16, held in its output
};

void prefetch_row(const std::uint16_t* row, std::size_t elements) {
  const char* bytes = reinterpret_cast<const char*>(row);
  for (std::size_t offset = 0; offset < elements * 2; offset += 64) {
    _mm_prefetch(bytes + offset, _MM_HINT_T0);
  }
}

// k4x8 dot of q (f16 values as f32) with the first `whole` (a multiple of 32) elements of k,
// reduced up to the last pairwise sums: returns t with the dot = (t0+t1) + (t2+t3).
__m128 dot_4x8_folded(const float* q, const std::uint16_t* k, std::size_t whole) {
  __m256 a0 = _mm256_setzero_ps();
  __m256 a1 = _mm256_setzero_ps();
  __m256 a2 = _mm256_setzero_ps();
  __m256 a3 = _mm256_setzero_ps();
  for (std::size_t i = 0; i < whole; i += 32) {
    a0 = _mm256_fmadd_ps(ops_simd::load_f16(k + i), _mm256_loadu_ps(q + i), a0);
    a1 = _mm256_fmadd_ps(ops_simd::load_f16(k + i + 8), _mm256_loadu_ps(q + i + 8), a1);
    a2 = _mm256_fmadd_ps(ops_simd::load_f16(k + i + 16), _mm256_loadu_ps(q + i + 16), a2);
    a3 = _mm256_fmadd_ps(ops_simd::load_f16(k + i + 24), _mm256_loadu_ps(q + i + 24), a3);
  }
  return ops_simd::fold_halves(_mm256_add_ps(_mm256_add_ps(a0, a2), _mm256_add_ps(a1, a3)));
}

float dot_1x8(const float* q, const std::uint16_t* k, std::size_t dim) {
  __m256 acc = _mm256_setzero_ps();
  for (std::size_t i = 0; i < dim; i += 8) {
    acc = _mm256_fmadd_ps(ops_simd::load_f16(k + i), _mm256_loadu_ps(q + i), acc);
  }
  return ops_simd::hsum8(acc);
}

// The k4x8 dot's leftover elements [whole, dim), added in double to the SIMD part.
float add_leftovers(float dot, const float* q, const std::uint16_t* k, std::size_t whole,
                    std::size_t dim) {
  double sum = static_cast<double>(dot);
  for (std::size_t i = whole; i < dim; ++i) sum += static_cast<double>(q[i] * _cvtsh_ss(k[i]));
  return static_cast<float>(sum);
}

// weights[t] = dot(q, k_t) * scale for first <= t < n, for every head of the batch.
void scores(const Batch& batch, DotOrder order, float scale, std::size_t first, std::size_t n,
            const Scratch& scratch) {
  const std::size_t dim = batch.dim;
  if (order == DotOrder::k1x8) {
    for (std::size_t t = first; t < n; ++t) {
      if (t + kPrefetchAhead < n) {
        prefetch_row(batch.k + scratch.slot(t + kPrefetchAhead) * batch.stride, dim);
      }
      const std::uint16_t* row = batch.k + scratch.slot(t) * batch.stride;
      for (std::size_t g = 0; g < batch.count; ++g) {
        scratch.weights_of(g)[t] = dot_1x8(batch.q[g], row, dim) * scale;
      }
    }
    return;
  }
  const std::size_t whole = dim - dim % 32;
  for (std::size_t t0 = first; t0 < n; t0 += 4) {
    const std::uint16_t* rows[4];
    for (std::size_t p = 0; p < 4; ++p) {
      const std::size_t t = t0 + p < n ? t0 + p : n - 1;  // repeats of the last are discarded
      rows[p] = batch.k + scratch.slot(t) * batch.stride;
      if (t + kPrefetchAhead < n) {
        prefetch_row(batch.k + scratch.slot(t + kPrefetchAhead) * batch.stride, dim);
      }
    }
    for (std::size_t g = 0; g < batch.count; ++g) {
      const float* q = batch.q[g];
      // hadd(hadd(a, b), hadd(c, d)) = [(a0+a1)+(a2+a3), (b0+b1)+(b2+b3), ...].
      const __m128 dots = _mm_hadd_ps(
          _mm_hadd_ps(dot_4x8_folded(q, rows[0], whole), dot_4x8_folded(q, rows[1], whole)),
          _mm_hadd_ps(dot_4x8_folded(q, rows[2], whole), dot_4x8_folded(q, rows[3], whole)));
      alignas(16) float sums[4];
      _mm_store_ps(sums, dots);
      float* w = scratch.weights_of(g);
      for (std::size_t p = 0; p < 4 && t0 + p < n; ++p) {
        const float dot = whole == dim ? sums[p] : add_leftovers(sums[p], q, rows[p], whole, dim);
        w[t0 + p] = dot * scale;
      }
    }
  }
}

// The accumulators of one head and one tile of dims: row r (one per dot lane, kTileDims floats)
// sums the positions t with t % lanes == r. Rows no position reached read as zeros.
struct Accumulators {
  float* data;
  std::size_t used;

  float* row_data(std::size_t r) const { return data + r * kTileDims; }
  __m256 row(std::size_t r, std::size_t c) const {
    return r < used ? _mm256_load_ps(row_data(r) + c) : _mm256_setzero_ps();
  }
  float row1(std::size_t r, std::size_t c) const { return r < used ? row_data(r)[c] : 0.0f; }
};

// The dot orders' reduction trees across the accumulator rows (reference::reduce_4x8 and
// reference::hsum8), for 8 dims at once and for one.
__m256 reduce_rows(const Accumulators& acc, DotOrder order, std::size_t c) {
  __m256 s[8];
  for (std::size_t l = 0; l < 8; ++l) {
    s[l] = order == DotOrder::k4x8
               ? _mm256_add_ps(_mm256_add_ps(acc.row(l, c), acc.row(16 + l, c)),
                               _mm256_add_ps(acc.row(8 + l, c), acc.row(24 + l, c)))
               : acc.row(l, c);
  }
  __m256 t[4];
  for (std::size_t i = 0; i < 4; ++i) t[i] = _mm256_add_ps(s[i], s[i + 4]);
  if (order == DotOrder::k4x8) {
    return _mm256_add_ps(_mm256_add_ps(t[0], t[1]), _mm256_add_ps(t[2], t[3]));
  }
  return _mm256_add_ps(_mm256_add_ps(t[0], t[2]), _mm256_add_ps(t[1], t[3]));
}

float reduce_rows1(const Accumulators& acc, DotOrder order, std::size_t c) {
  float s[8];
  for (std::size_t l = 0; l < 8; ++l) {
    s[l] = order == DotOrder::k4x8
               ? (acc.row1(l, c) + acc.row1(16 + l, c)) + (acc.row1(8 + l, c) + acc.row1(24 + l, c))
               : acc.row1(l, c);
  }
  float t[4];
  for (std::size_t i = 0; i < 4; ++i) t[i] = s[i] + s[i + 4];
  return order == DotOrder::k4x8 ? (t[0] + t[1]) + (t[2] + t[3]) : (t[0] + t[2]) + (t[1] + t[3]);
}

// out[d] = sum_t weights[t] * v_t[d] over [first, n) in `order`, for every head of the batch
// (its output is where its rounded q was). begin <= first: a multiple of kMaxLanes; position t
// lands in accumulator row (t - begin) % lanes == t % lanes, and the rows [0, n - begin) are
// cleared, as the positions [begin, first) of weight 0 would leave them.
void weighted_sum(const Batch& batch, DotOrder order, std::size_t begin, std::size_t first,
                  std::size_t n, const Scratch& scratch) {
  const std::size_t lanes = lanes_of(order);
  alignas(32) float storage[kMaxBatch * kMaxLanes * kTileDims];
  Accumulators acc[kMaxBatch];
  for (std::size_t g = 0; g < batch.count; ++g) {
    acc[g] = {storage + g * lanes * kTileDims, smaller(n - begin, lanes)};
  }
  for (std::size_t d0 = 0; d0 < batch.dim; d0 += kTileDims) {
    const std::size_t tile = smaller(batch.dim - d0, kTileDims);
    const std::size_t vec = tile - tile % 8;
    for (std::size_t g = 0; g < batch.count; ++g) {
      for (std::size_t r = 0; r < acc[g].used; ++r) {
        float* row = acc[g].row_data(r);
        for (std::size_t c = 0; c < kTileDims; c += 8) {
          _mm256_store_ps(row + c, _mm256_setzero_ps());
        }
      }
    }
    std::size_t r = (first - begin) % lanes;
    for (std::size_t t = first; t < n; ++t) {
      if (t + kPrefetchAhead < n) {
        prefetch_row(batch.v + scratch.slot(t + kPrefetchAhead) * batch.stride + d0, tile);
      }
      const std::uint16_t* v = batch.v + scratch.slot(t) * batch.stride + d0;
      for (std::size_t g = 0; g < batch.count; ++g) {
        const float weight = scratch.weights_of(g)[t];
        const __m256 p = _mm256_set1_ps(weight);
        float* a = acc[g].row_data(r);
        for (std::size_t c = 0; c < vec; c += 8) {
          _mm256_store_ps(a + c,
                          _mm256_fmadd_ps(ops_simd::load_f16(v + c), p, _mm256_load_ps(a + c)));
        }
        for (std::size_t c = vec; c < tile; ++c) {
          a[c] = __builtin_fmaf(_cvtsh_ss(v[c]), weight, a[c]);
        }
      }
      if (++r == lanes) r = 0;
    }
    for (std::size_t g = 0; g < batch.count; ++g) {
      float* out = batch.q[g] + d0;
      for (std::size_t c = 0; c < vec; c += 8) {
        _mm256_storeu_ps(out + c, reduce_rows(acc[g], order, c));
      }
      for (std::size_t c = vec; c < tile; ++c) out[c] = reduce_rows1(acc[g], order, c);
    }
  }
}

}  // namespace

std::size_t attention_scratch_floats(std::uint32_t max_context) noexcept {
  return kMaxBatch * round_up(max_context, kMaxLanes) + max_context;
}

void attention_row(const lpx_attention_args& args, std::uint32_t row, std::uint32_t head_begin,
                   std::uint32_t head_end, float* scratch) noexcept {
  const auto n = static_cast<std::size_t>(args.positions[row]) + 1;
  const std::size_t first_position = reference::first_attended(args.positions[row], args.window);
  const std::size_t begin = first_position - first_position % kMaxLanes;
  const std::size_t weights_stride = round_up(n, kMaxLanes);
  const Scratch work{scratch, weights_stride, scratch + kMaxBatch * weights_stride};
  attention_parts::gather_slots(args, first_position, n, work.slot_words);
  const std::size_t dim = args.head_dim;
  const std::uint32_t group = args.n_heads / args.n_kv_heads;
  const DotOrder qk_order = reference::qk_dot_order(args.n_rows, args.head_dim);
  const DotOrder pv_order = reference::pv_dot_order(args.n_rows, args.head_dim);
  float* row_out = args.out + static_cast<std::size_t>(row) * args.n_heads * dim;
  const float* row_q = args.q + static_cast<std::size_t>(row) * args.n_heads * dim;

  for (std::uint32_t first = head_begin; first < head_end;) {
    // The heads from `first` that share its kv head, at most kMaxBatch of them.
    const std::uint32_t kv_head = first / group;
    const std::uint32_t group_end =
        (kv_head + 1) * group < head_end ? (kv_head + 1) * group : head_end;
    Batch batch{};
    batch.k = args.k_cache + static_cast<std::size_t>(kv_head) * dim;
    batch.v = args.v_cache + static_cast<std::size_t>(kv_head) * dim;
    batch.stride = static_cast<std::size_t>(args.n_kv_heads) * dim;
    batch.dim = dim;
    batch.count = smaller(group_end - first, kMaxBatch);
    for (std::size_t g = 0; g < batch.count; ++g) {
      // q rounded to f16 lives in the head's output until the weighted sum overwrites it.
      float* out = row_out + (first + g) * dim;
      attention_parts::round_query(row_q + (first + g) * dim, out, dim);
      batch.q[g] = out;
    }
    scores(batch, qk_order, args.scale, first_position, n, work);
    for (std::size_t g = 0; g < batch.count; ++g) {
      attention_parts::softmax(work.weights_of(g), begin, first_position, n, args.softcap);
    }
    weighted_sum(batch, pv_order, begin, first_position, n, work);
    first += static_cast<std::uint32_t>(batch.count);
  }
}

}  // namespace lpx::kernels::LPX_X86_ISA
