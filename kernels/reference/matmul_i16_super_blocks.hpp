// The K types' side of the int16-activation matmul: the 256-element super-block activation format
// and its dot, as matmul_i16.hpp defines them, and the rounding and byte reads both formats
// share. Internal to the reference kernels.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "reference/half_precision.hpp"

namespace lpx::kernels::reference {

// Little-endian values at p (activation and weight bytes need not be aligned).
inline float f32_at(const std::uint8_t* p) noexcept {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}
inline float f16_at(const std::uint8_t* p) noexcept {
  std::uint16_t v;
  std::memcpy(&v, p, 2);
  return f16_to_f32(v);
}
inline std::int16_t i16_at(const std::uint8_t* p) noexcept {
  std::int16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

// The rounding of values whose largest magnitude is amax: q = round_half_even(x * inverse), the
// step d = amax / 32767. An all-zero group, or one so small that 32767 / amax overflows (amax
// below ~1e-34), gets inverse 0 and rounds to zeros rather than to infinities cast to int16.
struct I16Rounding {
  float d;
  float inverse;
};

inline I16Rounding i16_rounding(float amax) noexcept {
  const float inverse = 32767.0f / amax;
  return {amax / 32767.0f, amax != 0.0f && inverse <= std::numeric_limits<float>::max() ? inverse : 0.0f};
}

// The rounding of the n values at v (their largest magnitude's).
inline I16Rounding i16_rounding_of(const float* v, std::size_t n) noexcept {
  float amax = 0.0f;
  for (std::size_t e = 0; e < n; ++e) amax = std::fmax(amax, std::fabs(v[e]));
  return i16_rounding(amax);
}

// The 32 values at v rounded into int16 q at out; returns s = d * (sum of q), exact before the
// product.
inline float round_i16_block(const float* v, I16Rounding rounding, std::uint8_t* out) noexcept {
  int sum = 0;
  for (int e = 0; e < 32; ++e) {
    const auto q = static_cast<std::int16_t>(std::nearbyint(v[e] * rounding.inverse));
    sum += q;
    std::memcpy(out + 2 * e, &q, 2);
  }
  return rounding.d * static_cast<float>(sum);
}

// `batch` rows of `columns` (a multiple of 256) f32 into super-blocks.
void quantize_i16_super_blocks(const float* x, std::size_t columns, std::size_t batch, void* out) noexcept;

// One output of a Q4_K, Q5_K or Q6_K weight row against a super-block activation row.
float dot_i16_super_blocks(std::int32_t type, const void* w, const void* x, std::size_t columns) noexcept;

}  // namespace lpx::kernels::reference
