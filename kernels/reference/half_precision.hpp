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

// f32 to IEEE binary16, rounding to nearest, ties to even (what F16C's vcvtps2ph does with
// rounding mode 0): overflow gives infinity, tiny values become subnormals or zero, a NaN stays
// a (quiet) NaN with its sign.
constexpr std::uint16_t f32_to_f16(float value) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t magnitude = x & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) {  // NaN: keep the top payload bits, force quiet
    return static_cast<std::uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x3FFu));
  }
  if (magnitude >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // rounds to inf
  if (magnitude < 0x38800000u) {  // below the smallest normal f16: a subnormal or zero
    if (magnitude < 0x33000000u) return sign;  // below half the smallest subnormal: +-0
    const std::uint32_t exponent = magnitude >> 23;
    const std::uint32_t mantissa = (magnitude & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t shift = 126u - exponent;  // 14 + (113 - exponent) - 1, in [14, 24]
    std::uint32_t half = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  // Normal: rebias the exponent and round the 13 dropped mantissa bits to nearest even; a carry
  // out of the mantissa correctly bumps the exponent.
  const std::uint32_t rebased = magnitude - ((127u - 15u) << 23);
  const std::uint32_t rounded = rebased + 0x0FFFu + ((rebased >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | (rounded >> 13));
}

// bfloat16 is the upper half of an f32.
constexpr float bf16_to_f32(std::uint16_t bits) noexcept {
  return std::bit_cast<float>(std::uint32_t{bits} << 16);
}

// f32 to bfloat16, rounding to nearest, ties to even; a NaN becomes a quiet NaN with its sign
// and top payload bits (the GGUF ecosystem's conversion, bit for bit).
constexpr std::uint16_t f32_to_bf16(float value) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  return static_cast<std::uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace lpx::kernels::reference
