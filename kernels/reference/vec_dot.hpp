// Scalar reference of the second half of a matmul: the dot product of one weight row with one
// activation row already in the weight type's dot format (quantize_activations.hpp). Each
// function reproduces, bit for bit, the summation order of the GGUF ecosystem's reference engine
// on x86 with AVX2 and FMA, so that greedy decoding picks the same tokens:
//
// Block types (vec_dot): eight f32 lanes; per block, lane l receives the exact integer sum of
//   the products of elements 4l..4l+3 of each 32-element group (for K types, weighted by the
//   sub-block scales), converted to f32 and accumulated as acc[l] = fma(d_w * d_a, isum_l,
//   acc[l]). The result is hsum8(acc) = ((a0+a4) + (a2+a6)) + ((a1+a5) + (a3+a7)), plus, for
//   types with a minimum, a separate f32 accumulation of the minimum terms (see vec_dot.cpp).
// f32 / f16 / bf16 (vec_dot): four accumulators of eight lanes over steps of 32 elements,
//   reduced as described in vec_dot_float_types.cpp; the n % 32 leftover elements are added
//   after the reduction (f16, bf16: in double; f32: multiply, then add in f32, not fused).
// f32 / f16 / bf16 (gemm_dot): the engine's tiled matrix-matrix kernel, used for 2+ activation
//   rows: one accumulator of eight lanes (lane i takes elements i, i+8, ...), fma, hsum8.
//
// `w` points at one weight row of `type` (an lpx_tensor_type), `a` at one activation row in its
// dot format, both of `columns` elements; no alignment needed. Requires a valid type and
// columns a whole number of blocks (gemm_dot: a float type and columns % 8 == 0).
//
// Thread-safety: no state; callable from any thread. No allocation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lpx::kernels::reference {

float vec_dot(std::int32_t type, const void* w, const void* a, std::size_t columns) noexcept;

float gemm_dot(std::int32_t type, const void* w, const void* a, std::size_t columns) noexcept;

}  // namespace lpx::kernels::reference
