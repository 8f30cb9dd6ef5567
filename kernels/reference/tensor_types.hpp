// What every LPX tensor element type looks like in memory: its name, its block geometry, and how
// many bytes a row of it takes. Block-quantized types store a fixed number of elements per block
// (32 or 256); plain types (f32, f16, bf16) are blocks of one element.
//
// Thread-safety: everything here reads constant tables and may be called from any thread.
#pragma once

#include <cstdint>
#include <optional>

#include "lpx/kinds/tensor.h"

namespace lpx::kernels::reference {

struct TensorTypeTraits {
  lpx_tensor_type type;
  const char* name;             // lower case, as in pipeline files and messages: "q4_k"
  std::uint32_t block_elements;  // elements stored in one block
  std::uint32_t block_bytes;     // bytes one block takes
  std::uint32_t ggml_type;       // the id GGUF files use for this type (see ggml_types.hpp)
};

// The traits of `type` (an lpx_tensor_type, possibly read from an untrusted int32_t such as
// lpx_tensor_view::type); nullptr when it is not one.
const TensorTypeTraits* traits_of(std::int32_t type) noexcept;

inline bool is_valid_tensor_type(std::int32_t type) noexcept { return traits_of(type) != nullptr; }

// Bytes taken by `n_elements` consecutive elements of `type`. nullopt when the type is not
// valid, when n_elements is not a multiple of the type's block size, or when the byte count
// does not fit in 64 bits.
std::optional<std::uint64_t> row_size_bytes(std::int32_t type, std::uint64_t n_elements) noexcept;

}  // namespace lpx::kernels::reference
