// The type ids GGML and GGUF files use for tensor data, and how they map to lpx_tensor_type.
// GGUF files name each tensor's type by its GGML id; LPX supports a subset of them (see
// tensor_types.hpp). A reader can then say, e.g., "tensor 'x' has type Q2_K (10), which LPX
// does not support".
//
// Thread-safety: constant tables; callable from any thread.
#pragma once

#include <cstdint>
#include <optional>

#include "lpx/kinds/tensor.h"

namespace lpx::kernels::reference {

// The LPX type for a GGML type id; nullopt when LPX does not support it (or it is no GGML id).
std::optional<lpx_tensor_type> from_ggml_type(std::uint32_t ggml_type) noexcept;

// The GGML name of a GGML type id ("Q4_K", "BF16", "IQ2_XXS"...), also for types LPX does not
// support; nullptr when the id is not a GGML type (never assigned, or retired).
const char* ggml_type_name(std::uint32_t ggml_type) noexcept;

}  // namespace lpx::kernels::reference
