// Scalar reference dequantization: one row of any LPX tensor type to f32. This is the ground
// truth fast kernels are tested against, and it is bit-exact with the GGUF ecosystem's Python
// reference (gguf.quants.dequantize): every float operation happens in f32, in the same order,
// and the library is compiled without floating-point contraction (no fused multiply-add).
//
// Worth knowing when writing fast kernels: in every format here the products of an f16 scale
// and the small integers of a block are exact in f32 (at most 24 significant bits), so each
// result is rounded once, at the final add or subtract (Q8_K: at its one multiply). Grouping the
// products differently or fusing the last step into an FMA gives the same bits; what must not
// change is working in f32 and the operands themselves.
//
// Thread-safety: no state; callable from any thread. No allocation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lpx::kernels::reference {

enum class DequantizeStatus {
  ok,
  unsupported_type,           // not an lpx_tensor_type
  not_a_multiple_of_block,    // n_elements is not a whole number of blocks of the type
};

// A short English description of `status`, for error messages.
const char* describe(DequantizeStatus status) noexcept;

// Decodes `n_elements` elements of `type` (an lpx_tensor_type) starting at `src`, which must
// hold row_size_bytes(type, n_elements) bytes (no alignment needed), into dst[0 .. n_elements).
// On an error nothing is written.
[[nodiscard]] DequantizeStatus dequantize_row(std::int32_t type, const void* src,
                                              std::size_t n_elements, float* dst) noexcept;

}  // namespace lpx::kernels::reference
