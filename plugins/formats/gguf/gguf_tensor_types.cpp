#include "gguf_tensor_types.hpp"

#include "reference/ggml_types.hpp"
#include "reference/tensor_types.hpp"

namespace lpx::gguf {

namespace reference = lpx::kernels::reference;

std::optional<lpx_tensor_type> lpx_type_of_ggml(std::uint32_t ggml_type) {
  return reference::from_ggml_type(ggml_type);
}

std::string ggml_type_label(std::uint32_t ggml_type) {
  const char* name = reference::ggml_type_name(ggml_type);
  return std::string(name ? name : "unknown") + " (" + std::to_string(ggml_type) + ")";
}

core::Expected<std::uint64_t> tensor_bytes(lpx_tensor_type type, const std::int64_t* dims,
                                           std::uint32_t n_dims) {
  const reference::TensorTypeTraits* traits = reference::traits_of(type);
  const auto row = reference::row_size_bytes(type, static_cast<std::uint64_t>(dims[0]));
  if (traits == nullptr || !row) {
    return core::unexpected("rows of " + std::to_string(dims[0]) + " elements are not whole " +
                            (traits ? traits->name : "?") + " blocks of " +
                            std::to_string(traits ? traits->block_elements : 0));
  }
  std::uint64_t bytes = *row;
  for (std::uint32_t d = 1; d < n_dims; ++d) {
    if (dims[d] <= 0) return core::unexpected("dimension " + std::to_string(d) + " is not positive");
    const auto n = static_cast<std::uint64_t>(dims[d]);
    if (bytes > UINT64_MAX / n) return core::unexpected(std::string("byte size overflows"));
    bytes *= n;
  }
  return bytes;
}

}  // namespace lpx::gguf
