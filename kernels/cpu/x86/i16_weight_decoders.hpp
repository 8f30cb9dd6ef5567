// Weight blocks as int16 for the i16-activation matmul (reference/matmul_i16.hpp): for each
// weight type, a Decoder that gives the integers w(e) of one 32-element block as two vectors of
// 16 int16 (elements 0..15, 16..31) and the blocks' f32 scales and minimums. A stored block holds
// kBlocks such blocks (1, or 8 for the K types' 256-element super-blocks); its scales are
// decoded once per stored block (scales()), its integers block by block (values()).
// Internal to kernels/cpu/x86.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "cpu/x86/k_scales.hpp"
#include "cpu/x86/simd.hpp"
#include "lpx/kinds/tensor.h"

namespace lpx::kernels::LPX_X86_ISA::i16 {

inline __m256i load256(const void* p) noexcept { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline __m128i load128(const void* p) noexcept { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

struct Int16Block {
  __m256i lo, hi;
};

// The scales (dw) and minimums (mw) of a stored block's kBlocks blocks.
template <int kBlocks>
struct BlockScales {
  float d[kBlocks];
  float m[kBlocks];
};

// Bit e of the 16 bits `bits` as 16 (bit 4) in int16 lane e.
inline __m256i fifth_bits(std::uint32_t bits) noexcept {
  const __m256i mask = _mm256_setr_epi16(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384,
                                         static_cast<short>(0x8000));
  const __m256i set = _mm256_cmpeq_epi16(_mm256_and_si256(_mm256_set1_epi16(static_cast<short>(bits)), mask), mask);
  return _mm256_and_si256(set, _mm256_set1_epi16(16));
}

// 32 bytes as int16: bytes 0..15 in lo, 16..31 in hi.
inline Int16Block widen(__m256i bytes) noexcept {
  return {_mm256_cvtepu8_epi16(_mm256_castsi256_si128(bytes)), _mm256_cvtepu8_epi16(_mm256_extracti128_si256(bytes, 1))};
}

template <std::int32_t kType>
struct Decoder;

// --- the 32-element types: one block per stored block, f16 d (and m) at offset 0 -----------------

// d and m in one conversion (for the types without a minimum m is garbage and unused).
inline void f16_scale_and_min(const std::uint8_t* p, BlockScales<1>& s) noexcept {
  const __m128 dm = simd::load_f16x2(p);
  s.d[0] = _mm_cvtss_f32(dm);
  s.m[0] = _mm_cvtss_f32(_mm_movehdup_ps(dm));
}

template <>
struct Decoder<LPX_TENSOR_Q8_0> {
  static constexpr std::size_t kBytes = 34;
  static constexpr int kBlocks = 1;
  static constexpr bool kMin = false;
  static void scales(const std::uint8_t* p, BlockScales<1>& s) noexcept { f16_scale_and_min(p, s); }
  static Int16Block values(const std::uint8_t* p, int) noexcept {
    return {_mm256_cvtepi8_epi16(load128(p + 2)), _mm256_cvtepi8_epi16(load128(p + 18))};
  }
};

template <>
struct Decoder<LPX_TENSOR_Q4_0> {
  static constexpr std::size_t kBytes = 18;
  static constexpr int kBlocks = 1;
  static constexpr bool kMin = false;
  static void scales(const std::uint8_t* p, BlockScales<1>& s) noexcept { f16_scale_and_min(p, s); }
  static Int16Block values(const std::uint8_t* p, int) noexcept {
    const __m256i bytes = _mm256_cvtepu8_epi16(load128(p + 2));
    const __m256i eight = _mm256_set1_epi16(8);
    return {_mm256_sub_epi16(_mm256_and_si256(bytes, _mm256_set1_epi16(0x0F)), eight),
            _mm256_sub_epi16(_mm256_srli_epi16(bytes, 4), eight)};
  }
};

template <>
struct Decoder<LPX_TENSOR_Q4_1> {
  static constexpr std::size_t kBytes = 20;
  static constexpr int kBlocks = 1;
  static constexpr bool kMin = true;
  static void scales(const std::uint8_t* p, BlockScales<1>& s) noexcept { f16_scale_and_min(p, s); }
  static Int16Block values(const std::uint8_t* p, int) noexcept {
    const __m256i bytes = _mm256_cvtepu8_epi16(load128(p + 4));
    return {_mm256_and_si256(bytes, _mm256_set1_epi16(0x0F)), _mm256_srli_epi16(bytes, 4)};
  }
};

template <>
struct Decoder<LPX_TENSOR_Q5_0> {
  static constexpr std::size_t kBytes = 22;
  static constexpr int kBlocks = 1;
  static constexpr bool kMin = false;
  static void scales(const std::uint8_t* p, BlockScales<1>& s) noexcept { f16_scale_and_min(p, s); }
  static Int16Block values(const std::uint8_t* p, int) noexcept {
    const std::uint32_t qh = simd::load_u32(p + 2);
    const __m256i bytes = _mm256_cvtepu8_epi16(load128(p + 6));
    const __m256i sixteen = _mm256_set1_epi16(16);
    const __m256i lo = _mm256_or_si256(_mm256_and_si256(bytes, _mm256_set1_epi16(0x0F)), fifth_bits(qh & 0xFFFF));
    const __m256i hi = _mm256_or_si256(_mm256_srli_epi16(bytes, 4), fifth_bits(qh >> 16));
    return {_mm256_sub_epi16(lo, sixteen), _mm256_sub_epi16(hi, sixteen)};
  }
};

template <>
struct Decoder<LPX_TENSOR_Q5_1> {
  static constexpr std::size_t kBytes = 24;
  static constexpr int kBlocks = 1;
  static constexpr bool kMin = true;
  static void scales(const std::uint8_t* p, BlockScales<1>& s) noexcept { f16_scale_and_min(p, s); }
  static Int16Block values(const std::uint8_t* p, int) noexcept {
    const std::uint32_t qh = simd::load_u32(p + 4);
    const __m256i bytes = _mm256_cvtepu8_epi16(load128(p + 8));
    return {_mm256_or_si256(_mm256_and_si256(bytes, _mm256_set1_epi16(0x0F)), fifth_bits(qh & 0xFFFF)),
            _mm256_or_si256(_mm256_srli_epi16(bytes, 4), fifth_bits(qh >> 16))};
  }
};

// --- the K types: eight blocks per 256-element super-block ---------------------------------------

// Q4_K / Q5_K: dw_j = d * sc_j, mw_j = -(dmin * mn_j), eight at a time (exact products).
inline void k_scales_and_mins(const std::uint8_t* p, BlockScales<8>& s) noexcept {
  const KScalesAndMins sm = unpack_k_scales(p + 4);
  std::uint64_t sc, mn;
  std::memcpy(&sc, sm.sc, 8);
  std::memcpy(&mn, sm.mn, 8);
  const __m256 scales = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(sc))));
  const __m256 mins = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(mn))));
  _mm256_storeu_ps(s.d, _mm256_mul_ps(_mm256_set1_ps(simd::load_f16(p)), scales));
  _mm256_storeu_ps(s.m, _mm256_xor_ps(_mm256_mul_ps(_mm256_set1_ps(simd::load_f16(p + 2)), mins), _mm256_set1_ps(-0.0f)));
}

// Nibble j % 2 of the 32 bytes shared by sub-blocks j and j + 1 (j even).
inline __m256i k_nibbles(const std::uint8_t* qs, int j) noexcept {
  const __m256i bytes = load256(qs + 32 * (j / 2));
  return _mm256_and_si256(j % 2 != 0 ? _mm256_srli_epi16(bytes, 4) : bytes, _mm256_set1_epi8(0x0F));
}

template <>
struct Decoder<LPX_TENSOR_Q4_K> {
  static constexpr std::size_t kBytes = 144;
  static constexpr int kBlocks = 8;
  static constexpr bool kMin = true;
  static void scales(const std::uint8_t* p, BlockScales<8>& s) noexcept { k_scales_and_mins(p, s); }
  static Int16Block values(const std::uint8_t* p, int j) noexcept { return widen(k_nibbles(p + 16, j)); }
};

template <>
struct Decoder<LPX_TENSOR_Q5_K> {
  static constexpr std::size_t kBytes = 176;
  static constexpr int kBlocks = 8;
  static constexpr bool kMin = true;
  static void scales(const std::uint8_t* p, BlockScales<8>& s) noexcept { k_scales_and_mins(p, s); }
  // Bit j of qh[e] is bit 4 of element e.
  static Int16Block values(const std::uint8_t* p, int j) noexcept {
    const __m256i fifth = _mm256_and_si256(_mm256_srli_epi16(load256(p + 16), j), _mm256_set1_epi8(1));
    return widen(_mm256_or_si256(k_nibbles(p + 48, j), _mm256_slli_epi16(fifth, 4)));
  }
};

// Q6_K block j: half h = j / 4 of the super-block, position i = j % 4 in it; low 4 bits from
// nibble i / 2 of ql[64h + 32(i % 2) + e], top 2 bits from bits 2i of qh[32h + e]; w = (q - 32)
// times the int8 scale of its 16-element sub-block (8h + 2i for elements 0..15, + 1 after).
template <>
struct Decoder<LPX_TENSOR_Q6_K> {
  static constexpr std::size_t kBytes = 210;
  static constexpr int kBlocks = 8;
  static constexpr bool kMin = false;
  static void scales(const std::uint8_t* p, BlockScales<8>& s) noexcept {
    _mm256_storeu_ps(s.d, _mm256_set1_ps(simd::load_f16(p + 208)));
  }
  static Int16Block values(const std::uint8_t* p, int j) noexcept {
    const int h = j / 4, i = j % 4;
    const __m256i ql = load256(p + 64 * h + 32 * (i % 2));
    const __m256i low = _mm256_and_si256(i / 2 != 0 ? _mm256_srli_epi16(ql, 4) : ql, _mm256_set1_epi8(0x0F));
    const __m256i high = _mm256_and_si256(_mm256_srli_epi16(load256(p + 128 + 32 * h), 2 * i), _mm256_set1_epi8(3));
    const Int16Block q = widen(_mm256_or_si256(low, _mm256_slli_epi16(high, 4)));
    const std::int8_t* sc = reinterpret_cast<const std::int8_t*>(p + 192 + 8 * h + 2 * i);
    const __m256i thirty_two = _mm256_set1_epi16(32);
    return {_mm256_mullo_epi16(_mm256_sub_epi16(q.lo, thirty_two), _mm256_set1_epi16(sc[0])),
            _mm256_mullo_epi16(_mm256_sub_epi16(q.hi, thirty_two), _mm256_set1_epi16(sc[1]))};
  }
};

}  // namespace lpx::kernels::LPX_X86_ISA::i16
