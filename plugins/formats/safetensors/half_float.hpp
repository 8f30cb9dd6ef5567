// IEEE half and bfloat16 to float, for the few tensors the reader converts (norms and biases
// become f32, as in every GGUF file). Exact: every half and bfloat16 value is a float.
#pragma once

#include <cstdint>
#include <cstring>

namespace lpx::safetensors {

inline float bf16_to_float(std::uint16_t bits) noexcept {
  const std::uint32_t word = std::uint32_t{bits} << 16;
  float out;
  std::memcpy(&out, &word, sizeof(out));
  return out;
}

inline float f16_to_float(std::uint16_t bits) noexcept {
  const std::uint32_t sign = std::uint32_t{bits & 0x8000u} << 16;
  std::uint32_t exponent = (bits >> 10) & 0x1fu;
  std::uint32_t mantissa = bits & 0x3ffu;
  std::uint32_t word;
  if (exponent == 0x1f) {  // inf, NaN
    word = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {  // normal
    word = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {  // zero
    word = sign;
  } else {  // subnormal: normalise
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    word = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float out;
  std::memcpy(&out, &word, sizeof(out));
  return out;
}

}  // namespace lpx::safetensors
