// GGML tensor type ids as stored in GGUF, mapped onto LPX's tensor types and their byte sizes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lpx/kinds/tensor.h"
#include "gguf_expected.hpp"

namespace lpx::gguf {

// The LPX type for a GGML type id, or nothing when LPX does not support it.
std::optional<lpx_tensor_type> lpx_type_of_ggml(std::uint32_t ggml_type);
// "Q2_K (10)", or "unknown (99)".
std::string ggml_type_label(std::uint32_t ggml_type);
// Bytes of a tensor of `type` with `dims` (dims[0] contiguous), checked for block alignment and
// overflow.
Expected<std::uint64_t> tensor_bytes(lpx_tensor_type type, const std::int64_t* dims,
                                           std::uint32_t n_dims);

}  // namespace lpx::gguf
