// One dot-product routine per weight type, behind vec_dot() and gemm_dot(). Each takes one
// weight row and one activation row (dot format) of `n` elements. Internal to the reference
// kernels: callers use vec_dot.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lpx::kernels::reference::dots {

// The horizontal sum of eight f32 lanes used throughout: ((a0+a4) + (a2+a6)) + ((a1+a5) +
// (a3+a7)), the order of the AVX2 engine's 256-to-128-bit fold followed by two 128-bit folds.
inline float hsum8(const float (&a)[8]) noexcept {
  float r[4];
  for (int i = 0; i < 4; ++i) r[i] = a[i] + a[i + 4];
  return (r[0] + r[2]) + (r[1] + r[3]);
}

// vec_dot_32_element_quants.cpp
float q8_0(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept;
float q4_0(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept;
float q4_1(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept;
float q5_0(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept;
float q5_1(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept;

// vec_dot_k_quants.cpp
float q4_k(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept;
float q5_k(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept;
float q6_k(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept;
float q8_k(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept;

// vec_dot_float_types.cpp: vec_dot order, then gemm order.
float f32(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept;
float f16(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept;
float bf16(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept;
float gemm_f32(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept;
float gemm_f16(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept;
float gemm_bf16(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept;

// The pieces of f32()'s order, on float arrays (for matmul_f32.cpp): f32_steps adds `steps`
// steps of 32 elements to the four accumulators (accumulator j, lane l takes elements
// 32k + 8j + l, one fma each); fold_pairwise reduces them (and changes `sum`).
void f32_steps(const float* w, const float* x, std::size_t steps, float (&sum)[4][8]) noexcept;
float fold_pairwise(float (&sum)[4][8]) noexcept;

}  // namespace lpx::kernels::reference::dots
