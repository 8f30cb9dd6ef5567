// One decoder per tensor type, behind dequantize_row(). Each decodes `n_blocks` consecutive
// blocks at `blocks` into n_blocks * (elements per block) floats at `out`. Internal to the
// reference kernels: callers use dequantize_row(), which checks type and length.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lpx::kernels::reference::blocks {

// dequantize_float_types.cpp
void dequantize_f32(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept;
void dequantize_f16(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept;
void dequantize_bf16(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept;

// dequantize_32_element_quants.cpp
void dequantize_q8_0(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept;
void dequantize_q4_0(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept;
void dequantize_q4_1(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept;
void dequantize_q5_0(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept;
void dequantize_q5_1(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept;

// dequantize_k_quants.cpp
void dequantize_q4_k(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept;
void dequantize_q5_k(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept;
void dequantize_q6_k(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept;
void dequantize_q8_k(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept;

}  // namespace lpx::kernels::reference::blocks
