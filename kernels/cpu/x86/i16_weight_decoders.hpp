// Weight blocks as int16 for the i16-activation matmul (reference/matmul_i16.hpp): for each
// 32-element weight type, a Decoder that gives the integers w(e) of one block as two vectors of
// 16 int16 (elements 0..15, 16..31) and the block's f32 scale and minimum.
// Internal to kernels/cpu/x86.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "cpu/x86/simd.hpp"
#include "lpx/kinds/tensor.h"

namespace lpx::kernels::LPX_X86_ISA::i16 {

inline __m256i load256(const void* p) noexcept { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline __m128i load128(const void* p) noexcept { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

struct Int16Block {
  __m256i lo, hi;
};

// A block's scale (dw) and, for the _1 types, its minimum (mw).
struct BlockScale {
  float d;
  float m;
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

// --- f16 d (and m) at offset 0 of every block ---------------------------------------------------

// d and m in one conversion (for the types without a minimum m is garbage and unused).
inline BlockScale f16_scale_and_min(const std::uint8_t* p) noexcept {
  const __m128 dm = simd::load_f16x2(p);
  return {_mm_cvtss_f32(dm), _mm_cvtss_f32(_mm_movehdup_ps(dm))};
}

template <>
struct Decoder<LPX_TENSOR_Q8_0> {
  static constexpr std::size_t kBytes = 34;
  static constexpr bool kMin = false;
  static BlockScale scale(const std::uint8_t* p) noexcept { return f16_scale_and_min(p); }
  static Int16Block values(const std::uint8_t* p) noexcept {
    return {_mm256_cvtepi8_epi16(load128(p + 2)), _mm256_cvtepi8_epi16(load128(p + 18))};
  }
};

template <>
struct Decoder<LPX_TENSOR_Q4_0> {
  static constexpr std::size_t kBytes = 18;
  static constexpr bool kMin = false;
  static BlockScale scale(const std::uint8_t* p) noexcept { return f16_scale_and_min(p); }
  static Int16Block values(const std::uint8_t* p) noexcept {
    const __m256i bytes = _mm256_cvtepu8_epi16(load128(p + 2));
    const __m256i eight = _mm256_set1_epi16(8);
    return {_mm256_sub_epi16(_mm256_and_si256(bytes, _mm256_set1_epi16(0x0F)), eight),
            _mm256_sub_epi16(_mm256_srli_epi16(bytes, 4), eight)};
  }
};

template <>
struct Decoder<LPX_TENSOR_Q4_1> {
  static constexpr std::size_t kBytes = 20;
  static constexpr bool kMin = true;
  static BlockScale scale(const std::uint8_t* p) noexcept { return f16_scale_and_min(p); }
  static Int16Block values(const std::uint8_t* p) noexcept {
    const __m256i bytes = _mm256_cvtepu8_epi16(load128(p + 4));
    return {_mm256_and_si256(bytes, _mm256_set1_epi16(0x0F)), _mm256_srli_epi16(bytes, 4)};
  }
};

template <>
struct Decoder<LPX_TENSOR_Q5_0> {
  static constexpr std::size_t kBytes = 22;
  static constexpr bool kMin = false;
  static BlockScale scale(const std::uint8_t* p) noexcept { return f16_scale_and_min(p); }
  static Int16Block values(const std::uint8_t* p) noexcept {
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
  static constexpr bool kMin = true;
  static BlockScale scale(const std::uint8_t* p) noexcept { return f16_scale_and_min(p); }
  static Int16Block values(const std::uint8_t* p) noexcept {
    const std::uint32_t qh = simd::load_u32(p + 4);
    const __m256i bytes = _mm256_cvtepu8_epi16(load128(p + 8));
    return {_mm256_or_si256(_mm256_and_si256(bytes, _mm256_set1_epi16(0x0F)), fifth_bits(qh & 0xFFFF)),
            _mm256_or_si256(_mm256_srli_epi16(bytes, 4), fifth_bits(qh >> 16))};
  }
};

// Nibble j % 2 of the 32 bytes shared by K-type sub-blocks j and j + 1 (j even); the K types'
// decoders are in i16_super_block_decoders.hpp.
inline __m256i k_nibbles(const std::uint8_t* qs, int j) noexcept {
  const __m256i bytes = load256(qs + 32 * (j / 2));
  return _mm256_and_si256(j % 2 != 0 ? _mm256_srli_epi16(bytes, 4) : bytes, _mm256_set1_epi8(0x0F));
}

}  // namespace lpx::kernels::LPX_X86_ISA::i16
