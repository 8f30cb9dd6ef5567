// One row-range kernel per weight type, behind avx2::dot_rows (matmul.hpp). Internal to
// kernels/cpu/x86.
#pragma once

#include <cstddef>

#include "reference/matmul.hpp"

namespace lpx::kernels::LPX_X86_ISA::kernels {

using Args = reference::MatmulArgs;

// dot_32_element_quants.cpp
void q8_0(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept;
void q4_0(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept;
void q4_1(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept;
void q5_0(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept;
void q5_1(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept;

// dot_k_quants.cpp
void q4_k(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept;
void q5_k(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept;
void q6_k(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept;
void q8_k(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept;

// dot_float_types.cpp
void f32(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept;
void f16(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept;
void bf16(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept;

}  // namespace lpx::kernels::LPX_X86_ISA::kernels
