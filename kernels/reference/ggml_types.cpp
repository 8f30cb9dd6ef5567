#include "reference/ggml_types.hpp"

#include <array>

#include "reference/tensor_types.hpp"

namespace lpx::kernels::reference {
namespace {

// Indexed by GGML id. Gaps are ids GGML retired (4, 5: Q4_2, Q4_3; 31-33 and 36-38: repacked
// layouts that were moved out of the file format) and must not be read as valid.
constexpr std::array<const char*, 42> kGgmlNames = {
    "F32",     "F16",    "Q4_0",    "Q4_1",   nullptr,  nullptr,  "Q5_0",  "Q5_1",
    "Q8_0",    "Q8_1",   "Q2_K",    "Q3_K",   "Q4_K",   "Q5_K",   "Q6_K",  "Q8_K",
    "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S",  "IQ4_NL", "IQ3_S",  "IQ2_S", "IQ4_XS",
    "I8",      "I16",    "I32",     "I64",    "F64",    "IQ1_M",  "BF16",  nullptr,
    nullptr,   nullptr,  "TQ1_0",   "TQ2_0",  nullptr,  nullptr,  nullptr, "MXFP4",
    "NVFP4",   "Q1_0",
};

}  // namespace

std::optional<lpx_tensor_type> from_ggml_type(std::uint32_t ggml_type) noexcept {
  for (std::int32_t type = LPX_TENSOR_F32; is_valid_tensor_type(type); ++type) {
    const TensorTypeTraits* traits = traits_of(type);
    if (traits->ggml_type == ggml_type) return traits->type;
  }
  return std::nullopt;
}

const char* ggml_type_name(std::uint32_t ggml_type) noexcept {
  if (ggml_type >= kGgmlNames.size()) return nullptr;
  return kGgmlNames[ggml_type];
}

}  // namespace lpx::kernels::reference
