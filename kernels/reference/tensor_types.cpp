#include "reference/tensor_types.hpp"

#include <array>
#include <limits>

namespace lpx::kernels::reference {
namespace {

// Block geometry from the published GGML block layouts; GGML ids as stored in GGUF files.
constexpr std::array<TensorTypeTraits, 12> kTraits = {{
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

// The table is indexed by enum value, so it must list the enum in order without gaps.
constexpr bool table_is_in_enum_order() {
  for (std::size_t i = 0; i < kTraits.size(); ++i) {
    if (kTraits[i].type != LPX_TENSOR_F32 + static_cast<std::int32_t>(i)) return false;
  }
  return true;
}
static_assert(table_is_in_enum_order());

}  // namespace

const TensorTypeTraits* traits_of(std::int32_t type) noexcept {
  const std::int64_t index = std::int64_t{type} - LPX_TENSOR_F32;
  if (index < 0 || index >= static_cast<std::int64_t>(kTraits.size())) return nullptr;
  return &kTraits[static_cast<std::size_t>(index)];
}

std::optional<std::uint64_t> row_size_bytes(std::int32_t type, std::uint64_t n_elements) noexcept {
  const TensorTypeTraits* traits = traits_of(type);
  if (traits == nullptr || n_elements % traits->block_elements != 0) return std::nullopt;
  const std::uint64_t n_blocks = n_elements / traits->block_elements;
  if (n_blocks > std::numeric_limits<std::uint64_t>::max() / traits->block_bytes) {
    return std::nullopt;
  }
  return n_blocks * traits->block_bytes;
}

}  // namespace lpx::kernels::reference
