// K-type weight super-blocks as int16 for the i16 super-block dot (reference/matmul_i16.hpp):
// the integers w(e) of one 32-element block j with the sub-block scales folded in, as two
// vectors of 16 int16 (elements 0..15, 16..31) or, on AVX-512, one vector of 32; and the
// super-block's dw and minimums, decoded once per super-block (scales()).
// Internal to kernels/cpu/x86.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "cpu/x86/i16_weight_decoders.hpp"
#include "cpu/x86/k_scales.hpp"
#include "cpu/x86/simd.hpp"
#include "lpx/kinds/tensor.h"

namespace lpx::kernels::LPX_X86_ISA::i16 {

// What the super-block dot needs of a weight super-block besides its integers.
struct SuperBlockScales {
  float d;                       // dw
  alignas(32) float mw[8];       // Q4_K, Q5_K: -(dmin * m_j)
  std::int16_t sc[16];           // the sub-block scales folded into the integers (Q4_K, Q5_K: 8)
  std::uint32_t sc_pairs[8];     // Q4_K, Q5_K: sc_j in both halves, for a 32-bit broadcast
};

template <std::int32_t kType>
struct SuperBlockDecoder;

// Q4_K / Q5_K: d, the mins as mw, the 6-bit scales as int16.
inline void k_4_or_5_bit_scales(const std::uint8_t* p, SuperBlockScales& s) noexcept {
  const KScalesAndMins sm = unpack_k_scales(p + 4);
  std::uint64_t sc, mn;
  std::memcpy(&sc, sm.sc, 8);
  std::memcpy(&mn, sm.mn, 8);
  const __m128i sc8 = _mm_cvtsi64_si128(static_cast<long long>(sc));
  const __m128i sc16 = _mm_cvtepu8_epi16(sc8);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(s.sc), _mm256_zextsi128_si256(sc16));
  const __m256i sc32 = _mm256_cvtepu16_epi32(sc16);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(s.sc_pairs), _mm256_or_si256(sc32, _mm256_slli_epi32(sc32, 16)));
  const __m256 mins = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(mn))));
  _mm256_store_ps(s.mw, _mm256_xor_ps(_mm256_mul_ps(_mm256_set1_ps(simd::load_f16(p + 2)), mins), _mm256_set1_ps(-0.0f)));
  s.d = simd::load_f16(p);
}

inline Int16Block times(Int16Block b, std::int16_t scale) noexcept {
  const __m256i s = _mm256_set1_epi16(scale);
  return {_mm256_mullo_epi16(b.lo, s), _mm256_mullo_epi16(b.hi, s)};
}

template <>
struct SuperBlockDecoder<LPX_TENSOR_Q4_K> {
  static constexpr std::size_t kBytes = 144;
  static constexpr bool kMin = true;
  static constexpr int kSpanBlocks = 8;
  static void scales(const std::uint8_t* p, SuperBlockScales& s) noexcept { k_4_or_5_bit_scales(p, s); }
  static Int16Block values(const std::uint8_t* p, const SuperBlockScales& s, int j) noexcept {
    return times(widen(k_nibbles(p + 16, j)), s.sc[j]);
  }
#if defined(__AVX512BW__)
  static __m512i values(const std::uint8_t* p, __m512i scale, int j) noexcept {
    const __m512i q = _mm512_cvtepu8_epi16(load256(p + 16 + 32 * (j / 2)));
    return _mm512_mullo_epi16(j % 2 != 0 ? _mm512_srli_epi16(q, 4) : _mm512_and_si512(q, _mm512_set1_epi16(0x0F)),
                              scale);
  }
#endif
};

template <>
struct SuperBlockDecoder<LPX_TENSOR_Q5_K> {
  static constexpr std::size_t kBytes = 176;
  static constexpr bool kMin = true;
  static constexpr int kSpanBlocks = 8;
  static void scales(const std::uint8_t* p, SuperBlockScales& s) noexcept { k_4_or_5_bit_scales(p, s); }
  // Bit j of qh[e] is bit 4 of element e.
  static Int16Block values(const std::uint8_t* p, const SuperBlockScales& s, int j) noexcept {
    const __m256i fifth = _mm256_and_si256(_mm256_srli_epi16(load256(p + 16), j), _mm256_set1_epi8(1));
    return times(widen(_mm256_or_si256(k_nibbles(p + 48, j), _mm256_slli_epi16(fifth, 4))), s.sc[j]);
  }
#if defined(__AVX512BW__)
  static __m512i values(const std::uint8_t* p, __m512i scale, int j) noexcept {
    const __m512i q = _mm512_cvtepu8_epi16(load256(p + 48 + 32 * (j / 2)));
    const __m512i low = j % 2 != 0 ? _mm512_srli_epi16(q, 4) : _mm512_and_si512(q, _mm512_set1_epi16(0x0F));
    const __m512i qh = _mm512_cvtepu8_epi16(load256(p + 16));
    const __m512i fifth = _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(qh, j), _mm512_set1_epi16(1)), 4);
    return _mm512_mullo_epi16(_mm512_or_si512(low, fifth), scale);
  }
#endif
};

// Q6_K block j: half h = j / 4 of the super-block, position i = j % 4 in it; low 4 bits from
// nibble i / 2 of ql[64h + 32(i % 2) + e], top 2 bits from bits 2i of qh[32h + e]; w = (q - 32)
// times the int8 scale of its 16-element sub-block (2j for elements 0..15, 2j + 1 after).
template <>
struct SuperBlockDecoder<LPX_TENSOR_Q6_K> {
  static constexpr std::size_t kBytes = 210;
  static constexpr bool kMin = false;
  static constexpr int kSpanBlocks = 4;
  static void scales(const std::uint8_t* p, SuperBlockScales& s) noexcept {
    s.d = simd::load_f16(p + 208);
    const __m256i sc = _mm256_cvtepi8_epi16(load128(p + 192));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(s.sc), sc);
  }
  static Int16Block values(const std::uint8_t* p, const SuperBlockScales& s, int j) noexcept {
    const int h = j / 4, i = j % 4;
    const __m256i ql = load256(p + 64 * h + 32 * (i % 2));
    const __m256i low = _mm256_and_si256(i / 2 != 0 ? _mm256_srli_epi16(ql, 4) : ql, _mm256_set1_epi8(0x0F));
    const __m256i high = _mm256_and_si256(_mm256_srli_epi16(load256(p + 128 + 32 * h), 2 * i), _mm256_set1_epi8(3));
    const Int16Block q = widen(_mm256_or_si256(low, _mm256_slli_epi16(high, 4)));
    const __m256i thirty_two = _mm256_set1_epi16(32);
    return {_mm256_mullo_epi16(_mm256_sub_epi16(q.lo, thirty_two), _mm256_set1_epi16(s.sc[2 * j])),
            _mm256_mullo_epi16(_mm256_sub_epi16(q.hi, thirty_two), _mm256_set1_epi16(s.sc[2 * j + 1]))};
  }
#if defined(__AVX512BW__)
  static __m512i values(const std::uint8_t* p, __m512i scale, int j) noexcept {
    const int h = j / 4, i = j % 4;
    const __m512i ql = _mm512_cvtepu8_epi16(load256(p + 64 * h + 32 * (i % 2)));
    const __m512i low = i / 2 != 0 ? _mm512_srli_epi16(ql, 4) : _mm512_and_si512(ql, _mm512_set1_epi16(0x0F));
    const __m512i qh = _mm512_cvtepu8_epi16(load256(p + 128 + 32 * h));
    const __m512i high = _mm512_and_si512(_mm512_srli_epi16(qh, 2 * i), _mm512_set1_epi16(3));
    const __m512i q = _mm512_sub_epi16(_mm512_or_si512(low, _mm512_slli_epi16(high, 4)), _mm512_set1_epi16(32));
    return _mm512_mullo_epi16(q, scale);
  }
#endif
};

#if defined(__AVX512BW__)
// Block j's scale vector for the 32-lane values(): Q4_K / Q5_K's sc_j in every lane, a 32-bit
// broadcast from memory (the load port: the decode loop is short of port 5, where a 16-bit
// broadcast or a vpermw goes); Q6_K's sub-block 2j in lanes 0..15 and 2j + 1 in 16..31, one
// vpermw of `all` (its 16 scales in a register).
template <std::int32_t kType>
inline __m512i block_scale(const SuperBlockScales& s, __m512i all, int j) noexcept {
  if constexpr (kType == LPX_TENSOR_Q6_K) {
    const __m512i index = _mm512_inserti64x4(_mm512_set1_epi16(static_cast<short>(2 * j)),
                                             _mm256_set1_epi16(static_cast<short>(2 * j + 1)), 1);
    return _mm512_permutexvar_epi16(index, all);
  } else {
    return _mm512_set1_epi32(static_cast<int>(s.sc_pairs[j]));
  }
}
#endif

}  // namespace lpx::kernels::LPX_X86_ISA::i16
