// AVX2 f32-activation matmul, bit for bit the reference (reference/matmul_f32.cpp): every weight
// is computed with the operations of reference/dequantize_*.cpp in their order (a multiply, then
// a separately rounded add or subtract; never fused), then enters the F32 order: four
// accumulators of eight lanes, accumulator j taking elements 8j..8j+7 of each 32-element step
// (one fma each), the pairwise fold, then scalar leftovers.
#include "cpu/x86/matmul_f32.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "reference/half_precision.hpp"
#include "reference/k_scales.hpp"
#include "reference/tensor_types.hpp"

namespace lpx::kernels::LPX_X86_ISA {
namespace {

using Args = reference::F32MatmulArgs;
template <int J>
using Index = std::integral_constant<int, J>;

template <class F>
void unroll4(F f) noexcept {
  f(Index<0>{});
  f(Index<1>{});
  f(Index<2>{});
  f(Index<3>{});
}

std::uint16_t u16_at(const std::uint8_t* p) noexcept {
  std::uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
std::uint32_t u32_at(const std::uint8_t* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
float f32_at(const std::uint8_t* p) noexcept {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}
float f16_at(const std::uint8_t* p) noexcept { return _cvtsh_ss(u16_at(p)); }

// Eight bytes at p as eight int32 lanes, zero- or sign-extended.
__m256i u8x8(const std::uint8_t* p) noexcept {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
__m256i i8x8(const std::uint8_t* p) noexcept {
  return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

// --- weight decoders --------------------------------------------------------------------------
// Each reads 32 consecutive elements of a row (kBytes bytes at `p`); get<J>() gives elements
// 8J..8J+7 as f32, rounded exactly as reference/dequantize.hpp rounds them. Float types also
// give single elements (kElementBytes apart) for the leftovers of a row.

struct F32W {
  static constexpr std::size_t kBytes = 128;
  static constexpr std::size_t kElementBytes = 4;
  const std::uint8_t* p;
  explicit F32W(const std::uint8_t* block) noexcept : p(block) {}
  template <int J>
  __m256 get() const noexcept {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(p + 32 * J));
  }
  static float scalar(const std::uint8_t* e) noexcept { return f32_at(e); }
};

struct F16W {
  static constexpr std::size_t kBytes = 64;
  static constexpr std::size_t kElementBytes = 2;
  const std::uint8_t* p;
  explicit F16W(const std::uint8_t* block) noexcept : p(block) {}
  template <int J>
  __m256 get() const noexcept {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * J)));
  }
  static float scalar(const std::uint8_t* e) noexcept { return reference::f16_to_f32(u16_at(e)); }
};

struct BF16W {
  static constexpr std::size_t kBytes = 64;
  static constexpr std::size_t kElementBytes = 2;
  const std::uint8_t* p;
  explicit BF16W(const std::uint8_t* block) noexcept : p(block) {}
  template <int J>
  __m256 get() const noexcept {
    const __m256i wide =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * J)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  static float scalar(const std::uint8_t* e) noexcept { return reference::bf16_to_f32(u16_at(e)); }
};

// x = q * d.
struct Q8_0W {
  static constexpr std::size_t kBytes = 34;
  __m256 d;
  const std::uint8_t* q;
  explicit Q8_0W(const std::uint8_t* block) noexcept
      : d(_mm256_set1_ps(f16_at(block))), q(block + 2) {}
  template <int J>
  __m256 get() const noexcept {
    return _mm256_mul_ps(_mm256_cvtepi32_ps(i8x8(q + 8 * J)), d);
  }
};

// The nibbles of a 4-bit block: element e < 16 is the low nibble of qs[e], element e + 16 its
// high nibble; `low` and `high` hold qs[0..7] and qs[8..15] as int32 lanes.
struct Nibbles {
  __m256i low, high;
  explicit Nibbles(const std::uint8_t* qs) noexcept : low(u8x8(qs)), high(u8x8(qs + 8)) {}
  template <int J>
  __m256i get() const noexcept {
    const __m256i bytes = J % 2 == 0 ? low : high;
    if constexpr (J < 2) return _mm256_and_si256(bytes, _mm256_set1_epi32(0x0F));
    return _mm256_srli_epi32(bytes, 4);
  }
};

// Bit e of the 32-bit qh as bit 4 of element e, for elements 8J..8J+7.
struct FifthBits {
  __m256i qh, qh4;  // qh broadcast, and qh << 4 broadcast
  explicit FifthBits(const std::uint8_t* p) noexcept
      : qh(_mm256_set1_epi32(static_cast<int>(u32_at(p)))),
        qh4(_mm256_set1_epi32(static_cast<int>(u32_at(p) << 4))) {}
  template <int J>
  __m256i get() const noexcept {
    constexpr int e = 8 * J;
    // Shift bit e + l down to bit 4: from qh << 4 by e + l while that keeps it (J < 3), else
    // from qh by e + l - 4.
    const __m256i bits =
        J < 3 ? _mm256_srlv_epi32(
                    qh4, _mm256_setr_epi32(e, e + 1, e + 2, e + 3, e + 4, e + 5, e + 6, e + 7))
              : _mm256_srlv_epi32(
                    qh, _mm256_setr_epi32(e - 4, e - 3, e - 2, e - 1, e, e + 1, e + 2, e + 3));
    return _mm256_and_si256(bits, _mm256_set1_epi32(0x10));
  }
};

// x = d * (q - 8).
struct Q4_0W {
  static constexpr std::size_t kBytes = 18;
  __m256 d;
  Nibbles q;
  explicit Q4_0W(const std::uint8_t* block) noexcept
      : d(_mm256_set1_ps(f16_at(block))), q(block + 2) {}
  template <int J>
  __m256 get() const noexcept {
    const __m256i v = _mm256_sub_epi32(q.get<J>(), _mm256_set1_epi32(8));
    return _mm256_mul_ps(d, _mm256_cvtepi32_ps(v));
  }
};

// x = d * q + m. d*q is exact in f32 (an f16 times a 4-bit integer needs at most 15 significant
// bits), so one fma rounds exactly where the reference's multiply-then-add does: same bits.
struct Q4_1W {
  static constexpr std::size_t kBytes = 20;
  __m256 d, m;
  Nibbles q;
  explicit Q4_1W(const std::uint8_t* block) noexcept
      : d(_mm256_set1_ps(f16_at(block))), m(_mm256_set1_ps(f16_at(block + 2))), q(block + 4) {}
  template <int J>
  __m256 get() const noexcept {
    return _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(q.get<J>()), m);
  }
};

// x = d * (q - 16).
struct Q5_0W {
  static constexpr std::size_t kBytes = 22;
  __m256 d;
  FifthBits h;
  Nibbles q;
  explicit Q5_0W(const std::uint8_t* block) noexcept
      : d(_mm256_set1_ps(f16_at(block))), h(block + 2), q(block + 6) {}
  template <int J>
  __m256 get() const noexcept {
    const __m256i v = _mm256_or_si256(q.get<J>(), h.get<J>());
    return _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_sub_epi32(v, _mm256_set1_epi32(16))));
  }
};

// x = d * q + m, fused for the reason given at Q4_1W (q has 5 bits here).
struct Q5_1W {
  static constexpr std::size_t kBytes = 24;
  __m256 d, m;
  FifthBits h;
  Nibbles q;
  explicit Q5_1W(const std::uint8_t* block) noexcept
      : d(_mm256_set1_ps(f16_at(block))),
        m(_mm256_set1_ps(f16_at(block + 2))),
        h(block + 4),
        q(block + 8) {}
  template <int J>
  __m256 get() const noexcept {
    const __m256i v = _mm256_or_si256(q.get<J>(), h.get<J>());
    return _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(v), m);
  }
};

template <class W>
constexpr bool kFloatType =
    std::is_same_v<W, F32W> || std::is_same_v<W, F16W> || std::is_same_v<W, BF16W>;

// --- the F32 order ------------------------------------------------------------------------------

// s0 += s2, s1 += s3, s0 += s1; t = low + high; (t0 + t1) + (t2 + t3).
float fold_pairwise(const __m256 (&s)[4]) noexcept {
  const __m256 s0 = _mm256_add_ps(_mm256_add_ps(s[0], s[2]), _mm256_add_ps(s[1], s[3]));
  const __m128 t = _mm_add_ps(_mm256_castps256_ps128(s0), _mm256_extractf128_ps(s0, 1));
  const __m128 pairs = _mm_add_ps(t, _mm_movehdup_ps(t));  // lanes 0, 2: t0 + t1, t2 + t3
  return _mm_cvtss_f32(_mm_add_ss(pairs, _mm_movehl_ps(pairs, pairs)));
}

// Weight rows are streamed from memory once per matmul, in pieces too short for the hardware
// prefetcher to ramp up on (a thread's share of a 576 x 192 matrix is 35 KB): fetch
// kPrefetchBytes ahead, every cache line of a step. This took decode from ~117 to ~131 tokens/s
// on a 2-core Zen 3.
constexpr std::size_t kPrefetchBytes = 1536;

template <std::size_t kBytes>
void prefetch(const std::uint8_t* p) noexcept {
  for (std::size_t offset = 0; offset < kBytes; offset += 64) {
    _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchBytes + offset), _MM_HINT_T0);
  }
}

// Weight row `w` times activation rows b0..b0+B-1: each 32-element step of the row is decoded
// once for the B rows.
template <class W, int B>
void tile(const Args& args, const std::uint8_t* w, std::size_t r, std::size_t b0) noexcept {
  const std::size_t steps = args.columns / 32;
  const float* x[B];
  for (int b = 0; b < B; ++b) x[b] = args.x + (b0 + b) * args.columns;
  __m256 acc[B][4];
  for (int b = 0; b < B; ++b) {
    for (int j = 0; j < 4; ++j) acc[b][j] = _mm256_setzero_ps();
  }
  const std::uint8_t* p = w;
  for (std::size_t k = 0; k < steps; ++k, p += W::kBytes) {
    prefetch<W::kBytes>(p);
    const W block(p);
    unroll4([&](auto j) {
      const __m256 v = block.template get<decltype(j)::value>();
      for (int b = 0; b < B; ++b) {
        acc[b][j] = _mm256_fmadd_ps(v, _mm256_loadu_ps(x[b] + 32 * k + 8 * j), acc[b][j]);
      }
    });
  }
  for (int b = 0; b < B; ++b) {
    float result = fold_pairwise(acc[b]);
    if constexpr (kFloatType<W>) {
      for (std::size_t i = steps * 32; i < args.columns; ++i) {
        result += W::scalar(w + i * W::kElementBytes) * x[b][i];  // not fused (-ffp-contract=off)
      }
    }
    args.y[(b0 + b) * args.rows + r] = result;
  }
}

// All activation rows against one weight row, four at a time.
template <class W>
void row(const Args& args, const std::uint8_t* w, std::size_t r) noexcept {
  std::size_t b = 0;
  for (; b + 4 <= args.batch; b += 4) tile<W, 4>(args, w, r, b);
  switch (args.batch - b) {
    case 3:
      return tile<W, 3>(args, w, r, b);
    case 2:
      return tile<W, 2>(args, w, r, b);
    case 1:
      return tile<W, 1>(args, w, r, b);
    default:
      return;
  }
}

// A decoded weight row (f32, columns a multiple of 32) times activation rows b0..b0+B-1, in the
// F32 order. Accumulator j of a row takes elements 8j..8j+7 of each 32-element step in step
// order, exactly as in tile(); the four are independent, so they may be computed in passes of
// J of them: J x B accumulators live at a time instead of 4B. Enough independent chains to
// keep the FMA units busy (J x B of 4 to 8), few enough for AVX2's sixteen registers (tile()
// with four rows keeps sixteen accumulators and spills). Same products, same order: the same
// bits.
template <int B>
void decoded_tile(const Args& args, const float* w, std::size_t r, std::size_t b0) noexcept {
  constexpr int J = B <= 2 ? 4 : B <= 4 ? 2 : 1;  // accumulators per row in one pass
  const std::size_t steps = args.columns / 32;
  const float* x[B];
  for (int b = 0; b < B; ++b) x[b] = args.x + (b0 + b) * args.columns;
  __m256 folded[B][4];
  for (int j0 = 0; j0 < 4; j0 += J) {
    __m256 acc[J][B];
    for (int j = 0; j < J; ++j) {
      for (int b = 0; b < B; ++b) acc[j][b] = _mm256_setzero_ps();
    }
    for (std::size_t k = 0; k < steps; ++k) {
      for (int j = 0; j < J; ++j) {
        const std::size_t at = 32 * k + 8 * static_cast<std::size_t>(j0 + j);
        const __m256 v = _mm256_loadu_ps(w + at);
        for (int b = 0; b < B; ++b) acc[j][b] = _mm256_fmadd_ps(v, _mm256_loadu_ps(x[b] + at), acc[j][b]);
      }
    }
    for (int j = 0; j < J; ++j) {
      for (int b = 0; b < B; ++b) folded[b][j0 + j] = acc[j][b];
    }
  }
  for (int b = 0; b < B; ++b) args.y[(b0 + b) * args.rows + r] = fold_pairwise(folded[b]);
}

// All activation rows (at most eight) against one decoded weight row, in one decoded_tile.
void decoded_row(const Args& args, const float* w, std::size_t r) noexcept {
  switch (args.batch) {
    case 8: return decoded_tile<8>(args, w, r, 0);
    case 7: return decoded_tile<7>(args, w, r, 0);
    case 6: return decoded_tile<6>(args, w, r, 0);
    case 5: return decoded_tile<5>(args, w, r, 0);
    case 4: return decoded_tile<4>(args, w, r, 0);
    case 3: return decoded_tile<3>(args, w, r, 0);
    case 2: return decoded_tile<2>(args, w, r, 0);
    case 1: return decoded_tile<1>(args, w, r, 0);
    default: return;
  }
}

// Many activation rows (a prefill) against `n` decoded weight rows r0.. (w: n x columns): for
// each tile of four activation rows, every weight row of the block. The tile's activations are
// read from memory once per block and stay in L1 across it, instead of streaming every
// activation row through the cache once per weight row. Each output sums as in tile().
void decoded_block(const Args& args, const float* w, std::size_t r0, std::size_t n) noexcept {
  std::size_t b = 0;
  for (; b + 4 <= args.batch; b += 4) {
    for (std::size_t i = 0; i < n; ++i) decoded_tile<4>(args, w + i * args.columns, r0 + i, b);
  }
  for (std::size_t i = 0; i < n; ++i) {
    switch (args.batch - b) {
      case 3: decoded_tile<3>(args, w + i * args.columns, r0 + i, b); break;
      case 2: decoded_tile<2>(args, w + i * args.columns, r0 + i, b); break;
      case 1: decoded_tile<1>(args, w + i * args.columns, r0 + i, b); break;
      default: break;
    }
  }
}

// Rows row_begin..row_end-1 with more than eight activation rows: decoded a block of
// kF32ScratchRows at a time by `decode(weight row, out)`, then decoded_block.
template <class Decode>
void blocked_rows(const Args& args, std::size_t row_begin, std::size_t row_end, float* scratch,
                  Decode decode) noexcept {
  const auto* weights = static_cast<const std::uint8_t*>(args.weights);
  for (std::size_t r0 = row_begin; r0 < row_end; r0 += kF32ScratchRows) {
    const std::size_t n = std::min(kF32ScratchRows, row_end - r0);
    for (std::size_t i = 0; i < n; ++i) decode(weights + (r0 + i) * args.row_bytes, scratch + i * args.columns);
    decoded_block(args, scratch, r0, n);
  }
}

// A row of 32-element blocks decoded into `out` (columns floats), each value as W::get gives it.
template <class W>
void decode_row(const std::uint8_t* w, std::size_t columns, float* out) noexcept {
  for (std::size_t k = 0; k < columns / 32; ++k, w += W::kBytes, out += 32) {
    prefetch<W::kBytes>(w);
    const W block(w);
    unroll4([&](auto j) { _mm256_storeu_ps(out + 8 * j, block.template get<decltype(j)::value>()); });
  }
}

template <class W>
void rows(const Args& args, std::size_t row_begin, std::size_t row_end, float* scratch) noexcept {
  const auto* weights = static_cast<const std::uint8_t*>(args.weights);
  if (!kFloatType<W> && args.batch > 8) {
    return blocked_rows(args, row_begin, row_end, scratch, [&](const std::uint8_t* w, float* out) {
      decode_row<W>(w, args.columns, out);
    });
  }
  for (std::size_t r = row_begin; r < row_end; ++r) {
    const std::uint8_t* w = weights + r * args.row_bytes;
    if (kFloatType<W> || args.batch == 1) {
      row<W>(args, w, r);
    } else {
      // Several rows: decode the weights once into scratch (it stays in L1) and let every tile
      // read the same f32 values, rather than decode once per tile. Each output still sums the
      // same products in the same order: the same bits. (What a batch of sequences, a verify
      // step with drafts and a prefill multiply by.)
      decode_row<W>(w, args.columns, scratch);
      decoded_row(args, scratch, r);
    }
  }
}

// --- K types: a row at a time into scratch ------------------------------------------------------

// Q4_K / Q5_K: x = (d * sc) * q - (dmin * m), per 32-element sub-block s; q is nibble s % 2 of
// qs[32 * (s / 2) + l], plus (Q5_K) bit s of qh[l] as bit 4.
template <bool kFiveBit>
void dequantize_k_4_or_5_bit(const std::uint8_t* blocks, std::size_t n_blocks,
                             float* out) noexcept {
  constexpr std::size_t kBytes = kFiveBit ? 176 : 144;
  for (std::size_t i = 0; i < n_blocks; ++i, blocks += kBytes, out += 256) {
    prefetch<kBytes>(blocks);
    const float d = f16_at(blocks);
    const float dmin = f16_at(blocks + 2);
    const std::uint8_t* scales = blocks + 4;
    const std::uint8_t* qs = blocks + (kFiveBit ? 48 : 16);
    for (int s = 0; s < 8; ++s) {
      const reference::KScaleAndMin sm = reference::k_scale_and_min(scales, s);
      const __m256 scale = _mm256_set1_ps(d * static_cast<float>(sm.scale));
      const __m256 offset = _mm256_set1_ps(dmin * static_cast<float>(sm.min));
      const std::uint8_t* pair = qs + 32 * (s / 2);
      const __m128i shift = _mm_cvtsi32_si128(4 * (s % 2));
      for (int g = 0; g < 4; ++g) {
        __m256i q =
            _mm256_and_si256(_mm256_srl_epi32(u8x8(pair + 8 * g), shift), _mm256_set1_epi32(0x0F));
        if constexpr (kFiveBit) {
          const __m256i qh = u8x8(blocks + 16 + 8 * g);
          const __m256i bit =
              _mm256_and_si256(_mm256_srl_epi32(qh, _mm_cvtsi32_si128(s)), _mm256_set1_epi32(1));
          q = _mm256_or_si256(q, _mm256_slli_epi32(bit, 4));
        }
        const __m256 v = _mm256_sub_ps(_mm256_mul_ps(scale, _mm256_cvtepi32_ps(q)), offset);
        _mm256_storeu_ps(out + 32 * s + 8 * g, v);
      }
    }
  }
}

// Q6_K: x = (d * scale) * (q - 32); in each half of a block, element w takes the nibble
// w / 64 of ql[w % 64] and bits 2 * (w / 32) of qh[w % 32].
void dequantize_q6_k(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept {
  for (std::size_t i = 0; i < n_blocks; ++i, blocks += 210, out += 256) {
    prefetch<210>(blocks);
    const auto* scales = blocks + 192;
    const float d = f16_at(blocks + 208);
    for (int half = 0; half < 2; ++half) {
      const std::uint8_t* ql = blocks + 64 * half;
      const std::uint8_t* qh = blocks + 128 + 32 * half;
      for (int w = 0; w < 128; w += 8) {
        const __m256i low =
            _mm256_and_si256(_mm256_srl_epi32(u8x8(ql + w % 64), _mm_cvtsi32_si128(4 * (w / 64))),
                             _mm256_set1_epi32(0x0F));
        const __m256i high =
            _mm256_and_si256(_mm256_srl_epi32(u8x8(qh + w % 32), _mm_cvtsi32_si128(2 * (w / 32))),
                             _mm256_set1_epi32(0x03));
        const __m256i q = _mm256_sub_epi32(_mm256_or_si256(low, _mm256_slli_epi32(high, 4)),
                                           _mm256_set1_epi32(32));
        const int element = 128 * half + w;
        const auto sc = static_cast<std::int8_t>(scales[element / 16]);
        const __m256 scale = _mm256_set1_ps(d * static_cast<float>(sc));
        _mm256_storeu_ps(out + element, _mm256_mul_ps(scale, _mm256_cvtepi32_ps(q)));
      }
    }
  }
}

// Q8_K: x = d * q, d an f32.
void dequantize_q8_k(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept {
  for (std::size_t i = 0; i < n_blocks; ++i, blocks += 292, out += 256) {
    prefetch<292>(blocks);
    const __m256 d = _mm256_set1_ps(f32_at(blocks));
    for (int e = 0; e < 256; e += 8) {
      _mm256_storeu_ps(out + e, _mm256_mul_ps(d, _mm256_cvtepi32_ps(i8x8(blocks + 4 + e))));
    }
  }
}

template <void (*kDequantize)(const std::uint8_t*, std::size_t, float*) noexcept>
void k_rows(const Args& args, std::size_t row_begin, std::size_t row_end, float* scratch) noexcept {
  if (args.batch > 8) {
    return blocked_rows(args, row_begin, row_end, scratch, [&](const std::uint8_t* w, float* out) {
      kDequantize(w, args.columns / 256, out);
    });
  }
  const auto* weights = static_cast<const std::uint8_t*>(args.weights);
  for (std::size_t r = row_begin; r < row_end; ++r) {
    kDequantize(weights + r * args.row_bytes, args.columns / 256, scratch);
    decoded_row(args, scratch, r);
  }
}

}  // namespace

void dot_rows_f32(const reference::F32MatmulArgs& args, std::size_t row_begin, std::size_t row_end,
                  float* scratch) noexcept {
  const reference::TensorTypeTraits* traits = reference::traits_of(args.type);
  if (traits == nullptr || row_begin >= row_end || args.batch == 0) return;
  switch (traits->type) {
    case LPX_TENSOR_F32:
      return rows<F32W>(args, row_begin, row_end, scratch);
    case LPX_TENSOR_F16:
      return rows<F16W>(args, row_begin, row_end, scratch);
    case LPX_TENSOR_BF16:
      return rows<BF16W>(args, row_begin, row_end, scratch);
    case LPX_TENSOR_Q8_0:
      return rows<Q8_0W>(args, row_begin, row_end, scratch);
    case LPX_TENSOR_Q4_0:
      return rows<Q4_0W>(args, row_begin, row_end, scratch);
    case LPX_TENSOR_Q4_1:
      return rows<Q4_1W>(args, row_begin, row_end, scratch);
    case LPX_TENSOR_Q5_0:
      return rows<Q5_0W>(args, row_begin, row_end, scratch);
    case LPX_TENSOR_Q5_1:
      return rows<Q5_1W>(args, row_begin, row_end, scratch);
    case LPX_TENSOR_Q4_K:
      return k_rows<dequantize_k_4_or_5_bit<false>>(args, row_begin, row_end, scratch);
    case LPX_TENSOR_Q5_K:
      return k_rows<dequantize_k_4_or_5_bit<true>>(args, row_begin, row_end, scratch);
    case LPX_TENSOR_Q6_K:
      return k_rows<dequantize_q6_k>(args, row_begin, row_end, scratch);
    case LPX_TENSOR_Q8_K:
      return k_rows<dequantize_q8_k>(args, row_begin, row_end, scratch);
  }
}

}  // namespace lpx::kernels::LPX_X86_ISA
