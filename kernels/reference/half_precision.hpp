// Exact conversion of the two 16-bit float formats to f32, by hand (no compiler intrinsics or
// hardware conversion instructions, whose NaN handling varies): every f16 and bf16 value,
// including subnormals, infinities and NaNs, maps to the f32 with the same value; a NaN keeps
// its sign and payload bits (a signalling NaN is not quieted), as numpy and ggml do.
#pragma once

#include <bit>
#include <cstdint>

namespace lpx::kernels::reference {

// IEEE 754 binary16: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits.
constexpr float f16_to_f32(std::uint16_t bits) noexcept {
  const std::uint32_t sign = (std::uint32_t{bits} & 0x8000u) << 16;
  const std::uint32_t exponent = (std::uint32_t{bits} >> 10) & 0x1Fu;
  std::uint32_t mantissa = std::uint32_t{bits} & 0x3FFu;
  constexpr std::uint32_t kRebias = 127 - 15;

  if (exponent == 0x1F) {  // infinity or NaN
    return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  }
  if (exponent != 0) {  // normal
    return std::bit_cast<float>(sign | ((exponent + kRebias) << 23) | (mantissa << 13));
  }
  if (mantissa == 0) return std::bit_cast<float>(sign);  // signed zero
  // Subnormal: mantissa * 2^-24, a normal number in f32. Shift the leading one up to the
  // implicit-bit position, lowering the exponent once per shift.
  std::uint32_t f32_exponent = kRebias + 1;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    --f32_exponent;
  }
  return std::bit_cast<float>(sign | (f32_exponent << 23) | ((mantissa & 0x3FFu) << 13));
}

// bfloat16 is the upper half of an f32.
constexpr float bf16_to_f32(std::uint16_t bits) noexcept {
  return std::bit_cast<float>(std::uint32_t{bits} << 16);
}

}  // namespace lpx::kernels::reference
