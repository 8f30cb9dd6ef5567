// Decoders of the 32-element weight block types (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1) for the AVX2
// dots with q8_0 / q8_1 activations, shared by the one-row kernels (dot_32_element_quants.cpp)
// and the batched ones (gemm_32_element_quants.cpp). Internal to kernels/cpu/x86.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "cpu/x86/simd.hpp"

namespace lpx::kernels::LPX_X86_ISA::blocks {

// Weight block decoders: 32 values in element order, the f16 scale (and min) at offset 0.
// kUnsigned types feed maddubs directly; signed ones go through the sign trick.
struct Q8_0W {
  static constexpr std::size_t kBytes = 34;
  static constexpr bool kUnsigned = false;
  static constexpr bool kHasMin = false;
  static __m256i values(const std::uint8_t* b) noexcept { return simd::load_i8x32(b + 2); }
};
struct Q4_0W {
  static constexpr std::size_t kBytes = 18;
  static constexpr bool kUnsigned = false;
  static constexpr bool kHasMin = false;
  static __m256i values(const std::uint8_t* b) noexcept {
    return _mm256_sub_epi8(simd::nibbles(b + 2), _mm256_set1_epi8(8));
  }
};
struct Q4_1W {
  static constexpr std::size_t kBytes = 20;
  static constexpr bool kUnsigned = true;
  static constexpr bool kHasMin = true;
  static __m256i values(const std::uint8_t* b) noexcept { return simd::nibbles(b + 4); }
};
struct Q5_0W {
  static constexpr std::size_t kBytes = 22;
  static constexpr bool kUnsigned = false;
  static constexpr bool kHasMin = false;
  // q - 16 as int8: the nibble when bit 4 is set, else the nibble with the top four bits set.
  static __m256i values(const std::uint8_t* b) noexcept {
    const __m256i high =
        _mm256_andnot_si256(simd::expand_bits(b + 2), _mm256_set1_epi8(static_cast<char>(0xF0)));
    return _mm256_or_si256(simd::nibbles(b + 6), high);
  }
};
struct Q5_1W {
  static constexpr std::size_t kBytes = 24;
  static constexpr bool kUnsigned = true;
  static constexpr bool kHasMin = true;
  static __m256i values(const std::uint8_t* b) noexcept {
    const __m256i high = _mm256_and_si256(simd::expand_bits(b + 4), _mm256_set1_epi8(0x10));
    return _mm256_or_si256(simd::nibbles(b + 8), high);
  }
};

// Activation blocks: q8_1 (d, s, q) for types with a minimum, q8_0 (d, q) otherwise.
template <class W>
constexpr std::size_t kActivationBytes = W::kHasMin ? 36 : 34;

}  // namespace lpx::kernels::LPX_X86_ISA::blocks
