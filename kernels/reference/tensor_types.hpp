// The tensor-type traits of lpx/cpp/tensor_types.hpp (the SDK's, shared with plugins) as the
// kernels call them: out of line, so SIMD-compiled kernel libraries never hold a copy.
//
// Thread-safety: constant tables; callable from any thread.
#pragma once

#include <cstdint>
#include <optional>

#include "lpx/cpp/tensor_types.hpp"

namespace lpx::kernels::reference {

using TensorTypeTraits = lpx::TensorTypeTraits;

// The traits of `type`; nullptr when it is not an lpx_tensor_type.
const TensorTypeTraits* traits_of(std::int32_t type) noexcept;
inline bool is_valid_tensor_type(std::int32_t type) noexcept { return traits_of(type) != nullptr; }
// Bytes taken by `n_elements` consecutive elements of `type` (lpx::tensor_row_bytes).
std::optional<std::uint64_t> row_size_bytes(std::int32_t type, std::uint64_t n_elements) noexcept;

}  // namespace lpx::kernels::reference
