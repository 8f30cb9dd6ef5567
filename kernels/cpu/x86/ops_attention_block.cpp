// Attention of a block of query rows at once (the prompt's case), bit for bit
// reference::attention_row in the k1x8 orders a call of several rows uses. attention_row reads
// every key and value once per query row; this reads them once per block of up to
// cpu::kAttentionBlockQueries (row, head) pairs sharing a kv head, one chunk of positions at a
// time, widened to f32 into an L1-sized buffer:
//   - scores: a pair's q.k dots for 8 positions at once, one accumulator per position (the
//     k1x8 dot: lane l sums elements i = l mod 8, in order), then the 8 dots reduced together
//     in hsum8's order (hsum8_each);
//   - weighted sum: the chunk's values transposed into 8-position columns, where lane l holds
//     position t = l mod 8, the lane the k1x8 weighted sum gives t; one fma then adds 8
//     positions' products for one dim, and a pair's accumulators for a tile of dims stay in
//     registers across the chunk (one load per fma, none of attention_row's accumulator
//     stores).
// A row attends [first, n); the 8-position groups it shares with positions it does not attend
// are blended lane by lane, so what the cache holds there (NaN, other rows' data) changes no
// bit. Positions no row of the block attends are never read (with windows, rows far apart
// leave gaps whose blocks the cache may have dropped).
#include <immintrin.h>

#include <algorithm>
#include <cassert>
#include <cstdint>

#include "cpu/x86/attention_parts.hpp"
#include "cpu/x86/ops.hpp"
#include "cpu/x86/ops_simd.hpp"
#include "reference/ops.hpp"

namespace lpx::kernels::LPX_X86_ISA {
namespace {

using attention_parts::round_up;

constexpr std::size_t kGroup = 8;            // positions per score vector and value column
constexpr std::size_t kChunkFloats = 8192;   // one chunk of f32 keys or values: 32 KiB
#if defined(__AVX512F__)
constexpr std::size_t kDimTile = 16;  // accumulators held in registers: 32 ymm registers
#else
constexpr std::size_t kDimTile = 8;   // 16 ymm registers
#endif

std::size_t round_down(std::size_t n, std::size_t multiple) { return n - n % multiple; }

// The scratch, in floats: each pair's weights (indexed by position), the slots, the chunk
// buffer, and each pair's weighted-sum accumulators (dim x 8 lanes).
struct Scratch {
  float* weights;
  std::size_t weights_stride;
  float* slot_words;
  float* chunk;
  float* accumulators;
};

Scratch carve(float* scratch, std::size_t context) {
  Scratch s{};
  s.weights_stride = round_up(context, kGroup);
  s.weights = scratch;
  s.slot_words = s.weights + cpu::kAttentionBlockQueries * s.weights_stride;
  s.chunk = s.slot_words + context;
  s.accumulators = s.chunk + kChunkFloats;
  return s;
}

// One (row, head) pair.
struct Query {
  float* q_then_out;  // q rounded to f16 until the weighted sum's result replaces it
  float* w;           // weights, indexed by position
  float* acc;         // dim x 8: the k1x8 lanes of each dim's weighted sum
  std::size_t first;  // attends [first, n)
  std::size_t n;
  std::size_t lo;  // first rounded down to kGroup
  std::size_t hi;  // n rounded up to kGroup
};

// [hsum8(a[0]), ..., hsum8(a[7])], each in hsum8's order ((l0+l4)+(l2+l6))+((l1+l5)+(l3+l7)).
__m256 hsum8_each(const __m256 (&a)[8]) {
  // f[p]: [l0+l4, l1+l5, l2+l6, l3+l7] of a[p] in the low half, of a[p + 4] in the high half.
  __m256 f[4];
  for (std::size_t p = 0; p < 4; ++p) {
    f[p] = _mm256_add_ps(_mm256_permute2f128_ps(a[p], a[p + 4], 0x20),
                         _mm256_permute2f128_ps(a[p], a[p + 4], 0x31));
  }
  // [x0+x2, x1+x3] of two vectors per 128-bit half, then hadd adds those two.
  const __m256 s01 = _mm256_add_ps(_mm256_shuffle_ps(f[0], f[1], _MM_SHUFFLE(1, 0, 1, 0)),
                                   _mm256_shuffle_ps(f[0], f[1], _MM_SHUFFLE(3, 2, 3, 2)));
  const __m256 s23 = _mm256_add_ps(_mm256_shuffle_ps(f[2], f[3], _MM_SHUFFLE(1, 0, 1, 0)),
                                   _mm256_shuffle_ps(f[2], f[3], _MM_SHUFFLE(3, 2, 3, 2)));
  return _mm256_hadd_ps(s01, s23);
}

// r[j] becomes column j of the 8x8 matrix whose rows were r[0..7].
void transpose8(__m256 (&r)[8]) {
  __m256 t[8];
  for (std::size_t i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  __m256 u[8];
  for (std::size_t i = 0; i < 2; ++i) {  // rows 0-3, then 4-7
    u[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (std::size_t j = 0; j < 4; ++j) {
    r[j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
    r[4 + j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
  }
}

// The positions the block's rows attend: the union of their ranges [first, n), which has gaps
// when rows far apart have windows (the cache need not hold anything there).
struct Attended {
  std::size_t first[cpu::kAttentionBlockQueries];
  std::size_t end[cpu::kAttentionBlockQueries];
  std::size_t rows = 0;

  bool holds(std::size_t t) const {
    for (std::size_t r = 0; r < rows; ++r) {
      if (t >= first[r] && t < end[r]) return true;
    }
    return false;
  }
};

// Where a kv head's keys or values come from: position t is read only when some row attends
// it; the others read as zeros.
struct Source {
  const std::uint16_t* pool;  // the kv head's vector in slot 0 of the K or V pool
  std::size_t stride;         // elements between consecutive slots
  std::size_t dim;
  const float* slot_words;
  const Attended* attended;

  const std::uint16_t* row(std::size_t t) const {
    if (!attended->holds(t)) return nullptr;
    return pool + attention_parts::slot_at(slot_words, t) * stride;
  }
};

// chunk[(t - c0) * dim + d] = key t, element d.
void widen_keys(const Source& keys, std::size_t c0, std::size_t c1, float* chunk) {
  for (std::size_t t = c0; t < c1; ++t) {
    const std::uint16_t* k = keys.row(t);
    float* out = chunk + (t - c0) * keys.dim;
    for (std::size_t d = 0; d < keys.dim; d += 8) {
      _mm256_storeu_ps(out + d, k != nullptr ? ops_simd::load_f16(k + d) : _mm256_setzero_ps());
    }
  }
}

// chunk[(t - c0) * dim + d * 8 + t % 8] = value t, element d: per group of 8 positions, one
// 8-lane column per dim.
void transpose_values(const Source& values, std::size_t c0, std::size_t c1, float* chunk) {
  for (std::size_t t0 = c0; t0 < c1; t0 += kGroup) {
    const std::uint16_t* v[kGroup];
    for (std::size_t p = 0; p < kGroup; ++p) v[p] = values.row(t0 + p);
    float* out = chunk + (t0 - c0) * values.dim;
    for (std::size_t d0 = 0; d0 < values.dim; d0 += 8) {
      __m256 r[8];
      for (std::size_t p = 0; p < kGroup; ++p) {
        r[p] = v[p] != nullptr ? ops_simd::load_f16(v[p] + d0) : _mm256_setzero_ps();
      }
      transpose8(r);
      for (std::size_t j = 0; j < 8; ++j) _mm256_storeu_ps(out + (d0 + j) * kGroup, r[j]);
    }
  }
}

// w[t] = dot(q, k_t) * scale for the query's groups inside [c0, c1).
void scores(const Query& query, const float* keys, std::size_t dim, std::size_t c0,
            std::size_t c1, float scale) {
  const std::size_t from = std::max(c0, query.lo);
  const std::size_t to = std::min(c1, query.hi);
  const __m256 vscale = _mm256_set1_ps(scale);
  for (std::size_t t = from; t < to; t += kGroup) {
    const float* k = keys + (t - c0) * dim;
    __m256 a[kGroup];
    for (std::size_t p = 0; p < kGroup; ++p) a[p] = _mm256_setzero_ps();
    for (std::size_t d = 0; d < dim; d += 8) {
      const __m256 q = _mm256_loadu_ps(query.q_then_out + d);
      for (std::size_t p = 0; p < kGroup; ++p) {
        a[p] = _mm256_fmadd_ps(_mm256_loadu_ps(k + p * dim + d), q, a[p]);
      }
    }
    _mm256_storeu_ps(query.w + t, _mm256_mul_ps(hsum8_each(a), vscale));
  }
}

// Lanes of the group at t0 whose positions the query attends.
__m256 attended_lanes(const Query& query, std::size_t t0) {
  const __m256i t = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(t0)),
                                     _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256i at_or_after_first =
      _mm256_cmpgt_epi32(t, _mm256_set1_epi32(static_cast<int>(query.first) - 1));
  const __m256i before_n = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(query.n)), t);
  return _mm256_castsi256_ps(_mm256_and_si256(at_or_after_first, before_n));
}

// acc[d] += w[t] * v_t[d] lane by lane for the groups of [from, to) and the kTile dims from d0
// (kDimTile, or 8 for the dims left over after the whole tiles).
template <std::size_t kTile>
void weighted_sum_tile(const Query& query, const float* values, std::size_t dim, std::size_t c0,
                       std::size_t from, std::size_t to, std::size_t d0) {
  __m256 acc[kTile];
  float* stored = query.acc + d0 * kGroup;
  for (std::size_t i = 0; i < kTile; ++i) acc[i] = _mm256_loadu_ps(stored + i * kGroup);
  for (std::size_t t = from; t < to; t += kGroup) {
    const float* v = values + (t - c0) * dim + d0 * kGroup;
    const __m256 w = _mm256_loadu_ps(query.w + t);
    if (t >= query.first && t + kGroup <= query.n) {
      for (std::size_t i = 0; i < kTile; ++i) {
        acc[i] = _mm256_fmadd_ps(_mm256_loadu_ps(v + i * kGroup), w, acc[i]);
      }
    } else {
      const __m256 lanes = attended_lanes(query, t);
      for (std::size_t i = 0; i < kTile; ++i) {
        acc[i] = _mm256_blendv_ps(
            acc[i], _mm256_fmadd_ps(_mm256_loadu_ps(v + i * kGroup), w, acc[i]), lanes);
      }
    }
  }
  for (std::size_t i = 0; i < kTile; ++i) _mm256_storeu_ps(stored + i * kGroup, acc[i]);
}

void weighted_sum(const Query& query, const float* values, std::size_t dim, std::size_t c0,
                  std::size_t c1) {
  const std::size_t from = std::max(c0, query.lo);
  const std::size_t to = std::min(c1, query.hi);
  if (from >= to) return;
  std::size_t d0 = 0;
  for (; d0 + kDimTile <= dim; d0 += kDimTile) {
    weighted_sum_tile<kDimTile>(query, values, dim, c0, from, to, d0);
  }
  for (; d0 < dim; d0 += 8) weighted_sum_tile<8>(query, values, dim, c0, from, to, d0);
}

// out[d] = hsum8 of dim d's lanes (the k1x8 weighted sum's reduction).
void reduce_into_output(const Query& query, std::size_t dim) {
  for (std::size_t d0 = 0; d0 < dim; d0 += 8) {
    __m256 lanes[8];
    for (std::size_t j = 0; j < 8; ++j) lanes[j] = _mm256_loadu_ps(query.acc + (d0 + j) * kGroup);
    _mm256_storeu_ps(query.q_then_out + d0, hsum8_each(lanes));
  }
}

}  // namespace

std::size_t attention_block_scratch_floats(std::uint32_t max_context,
                                           std::uint32_t head_dim) noexcept {
  const std::size_t per_query = round_up(max_context, kGroup) + std::size_t{head_dim} * kGroup;
  return cpu::kAttentionBlockQueries * per_query + max_context + kChunkFloats;
}

bool attention_block_takes(const lpx_attention_args& args) noexcept {
  return args.n_rows >= 2 && args.head_dim % 8 == 0 && args.head_dim <= kChunkFloats / kGroup;
}

void attention_block(const lpx_attention_args& args, std::uint32_t row_begin,
                     std::uint32_t row_end, std::uint32_t head_begin, std::uint32_t head_end,
                     float* scratch) noexcept {
  assert(std::size_t{row_end - row_begin} * (head_end - head_begin) <= cpu::kAttentionBlockQueries);
  const std::size_t dim = args.head_dim;
  const std::uint32_t kv_head = head_begin / (args.n_heads / args.n_kv_heads);
  Attended attended;
  std::size_t readable_first = SIZE_MAX;
  std::size_t readable_end = 0;
  for (std::uint32_t r = row_begin; r < row_end; ++r, ++attended.rows) {
    attended.first[attended.rows] = reference::first_attended(args.positions[r], args.window);
    attended.end[attended.rows] = static_cast<std::size_t>(args.positions[r]) + 1;
    readable_first = std::min(readable_first, attended.first[attended.rows]);
    readable_end = std::max(readable_end, attended.end[attended.rows]);
  }
  const Scratch work = carve(scratch, readable_end);

  Query queries[cpu::kAttentionBlockQueries];
  std::size_t count = 0;
  for (std::uint32_t r = row_begin; r < row_end; ++r) {
    for (std::uint32_t h = head_begin; h < head_end; ++h, ++count) {
      Query& query = queries[count];
      const std::size_t offset = (std::size_t{r} * args.n_heads + h) * dim;
      query.q_then_out = args.out + offset;
      attention_parts::round_query(args.q + offset, query.q_then_out, dim);
      query.w = work.weights + count * work.weights_stride;
      query.acc = work.accumulators + count * dim * kGroup;
      query.first = reference::first_attended(args.positions[r], args.window);
      query.n = static_cast<std::size_t>(args.positions[r]) + 1;
      query.lo = round_down(query.first, kGroup);
      query.hi = round_up(query.n, kGroup);
    }
  }
  for (std::size_t r = 0; r < attended.rows; ++r) {
    attention_parts::gather_slots(args, attended.first[r], attended.end[r], work.slot_words);
  }
  const std::size_t stride = std::size_t{args.n_kv_heads} * dim;
  const Source keys{args.k_cache + kv_head * dim, stride, dim, work.slot_words, &attended};
  const Source values{args.v_cache + kv_head * dim, stride, dim, work.slot_words, &attended};
  const std::size_t lo = round_down(readable_first, kGroup);
  const std::size_t hi = round_up(readable_end, kGroup);
  const std::size_t chunk_positions = round_down(kChunkFloats / dim, kGroup);

  for (std::size_t c0 = lo; c0 < hi; c0 += chunk_positions) {
    const std::size_t c1 = std::min(hi, c0 + chunk_positions);
    widen_keys(keys, c0, c1, work.chunk);
    for (std::size_t i = 0; i < count; ++i) {
      scores(queries[i], work.chunk, dim, c0, c1, args.scale);
    }
  }
  for (std::size_t i = 0; i < count; ++i) {
    const Query& query = queries[i];
    attention_parts::softmax(query.w, query.lo, query.first, query.n, args.softcap);
    std::fill(query.acc, query.acc + dim * kGroup, 0.0f);
  }
  for (std::size_t c0 = lo; c0 < hi; c0 += chunk_positions) {
    const std::size_t c1 = std::min(hi, c0 + chunk_positions);
    transpose_values(values, c0, c1, work.chunk);
    for (std::size_t i = 0; i < count; ++i) weighted_sum(queries[i], work.chunk, dim, c0, c1);
  }
  for (std::size_t i = 0; i < count; ++i) reduce_into_output(queries[i], dim);
}

}  // namespace lpx::kernels::LPX_X86_ISA
