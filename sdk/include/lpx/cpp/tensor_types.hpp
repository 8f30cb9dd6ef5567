// What every LPX tensor element type looks like in memory — its name, block geometry, the id
// GGUF files give it — and how many bytes a row of it takes. Header-only, for plugins (a model
// format checks tensor extents with it) and the core alike; kernels/reference wraps it for the
// kernels.
//
// Thread-safety: constant tables; callable from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>

#include "lpx/kinds/tensor.h"

namespace lpx {

struct TensorTypeTraits {
  lpx_tensor_type type;
  const char* name;              // lower case, as in pipeline files and messages: "q4_k"
  std::uint32_t block_elements;  // elements stored in one block
  std::uint32_t block_bytes;     // bytes one block takes
  std::uint32_t ggml_type;       // the id GGUF files use for this type
};

// Block geometry from the published GGML block layouts, in lpx_tensor_type order.
inline constexpr std::array<TensorTypeTraits, 12> kTensorTypes = {{
    {LPX_TENSOR_F32, "f32", 1, 4, 0},
    {LPX_TENSOR_F16, "f16", 1, 2, 1},
    {LPX_TENSOR_BF16, "bf16", 1, 2, 30},
    {LPX_TENSOR_Q8_0, "q8_0", 32, 34, 8},
    {LPX_TENSOR_Q4_0, "q4_0", 32, 18, 2},
    {LPX_TENSOR_Q4_1, "q4_1", 32, 20, 3},
    {LPX_TENSOR_Q5_0, "q5_0", 32, 22, 6},
    {LPX_TENSOR_Q5_1, "q5_1", 32, 24, 7},
    {LPX_TENSOR_Q4_K, "q4_k", 256, 144, 12},
    {LPX_TENSOR_Q5_K, "q5_k", 256, 176, 13},
    {LPX_TENSOR_Q6_K, "q6_k", 256, 210, 14},
    {LPX_TENSOR_Q8_K, "q8_k", 256, 292, 15},
}};

namespace detail {
constexpr bool tensor_types_in_enum_order() {
  for (std::size_t i = 0; i < kTensorTypes.size(); ++i) {
    if (kTensorTypes[i].type != LPX_TENSOR_F32 + static_cast<std::int32_t>(i)) return false;
  }
  return true;
}
static_assert(tensor_types_in_enum_order(), "kTensorTypes is indexed by enum value");

// GGML names by GGML id. Gaps are ids GGML retired (4, 5: Q4_2, Q4_3; 31-33 and 36-38: repacked
// layouts that were moved out of the file format) and must not be read as valid.
inline constexpr std::array<const char*, 42> kGgmlNames = {
    "F32",     "F16",    "Q4_0",    "Q4_1",   nullptr,  nullptr,  "Q5_0",  "Q5_1",
    "Q8_0",    "Q8_1",   "Q2_K",    "Q3_K",   "Q4_K",   "Q5_K",   "Q6_K",  "Q8_K",
    "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S",  "IQ4_NL", "IQ3_S",  "IQ2_S", "IQ4_XS",
    "I8",      "I16",    "I32",     "I64",    "F64",    "IQ1_M",  "BF16",  nullptr,
    nullptr,   nullptr,  "TQ1_0",   "TQ2_0",  nullptr,  nullptr,  nullptr, "MXFP4",
    "NVFP4",   "Q1_0",
};
}  // namespace detail

// The traits of `type` (possibly an untrusted int32_t such as lpx_tensor_view::type); nullptr
// when it is not an lpx_tensor_type.
inline const TensorTypeTraits* tensor_type_traits(std::int32_t type) noexcept {
  const std::int64_t index = std::int64_t{type} - LPX_TENSOR_F32;
  if (index < 0 || index >= static_cast<std::int64_t>(kTensorTypes.size())) return nullptr;
  return &kTensorTypes[static_cast<std::size_t>(index)];
}

// Bytes taken by `n_elements` consecutive elements of `type`; nullopt when the type is not
// valid, n_elements is not a multiple of its block, or the count does not fit in 64 bits.
inline std::optional<std::uint64_t> tensor_row_bytes(std::int32_t type,
                                                     std::uint64_t n_elements) noexcept {
  const TensorTypeTraits* traits = tensor_type_traits(type);
  if (traits == nullptr || n_elements % traits->block_elements != 0) return std::nullopt;
  const std::uint64_t n_blocks = n_elements / traits->block_elements;
  if (n_blocks > std::numeric_limits<std::uint64_t>::max() / traits->block_bytes) {
    return std::nullopt;
  }
  return n_blocks * traits->block_bytes;
}

// The LPX type for a GGML type id; nullopt when LPX does not support it (or it is no GGML id).
inline std::optional<lpx_tensor_type> from_ggml_type(std::uint32_t ggml_type) noexcept {
  for (const TensorTypeTraits& traits : kTensorTypes) {
    if (traits.ggml_type == ggml_type) return traits.type;
  }
  return std::nullopt;
}

// The GGML name of a GGML type id ("Q4_K", "IQ2_XXS"...), also for types LPX does not support;
// nullptr when the id is not a GGML type (never assigned, or retired).
inline const char* ggml_type_name(std::uint32_t ggml_type) noexcept {
  return ggml_type < detail::kGgmlNames.size() ? detail::kGgmlNames[ggml_type] : nullptr;
}

}  // namespace lpx
