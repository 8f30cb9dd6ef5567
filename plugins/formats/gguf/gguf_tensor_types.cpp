#include "gguf_tensor_types.hpp"

#include <lpx/cpp/tensor_types.hpp>

namespace lpx::gguf {

std::optional<lpx_tensor_type> lpx_type_of_ggml(std::uint32_t ggml_type) {
  return from_ggml_type(ggml_type);
}

std::string ggml_type_label(std::uint32_t ggml_type) {
  const char* name = ggml_type_name(ggml_type);
  return std::string(name ? name : "unknown") + " (" + std::to_string(ggml_type) + ")";
}

Expected<std::uint64_t> tensor_bytes(lpx_tensor_type type, const std::int64_t* dims,
                                           std::uint32_t n_dims) {
  const TensorTypeTraits* traits = tensor_type_traits(type);
  const auto row = tensor_row_bytes(type, static_cast<std::uint64_t>(dims[0]));
  if (traits == nullptr || !row) {
    return unexpected("rows of " + std::to_string(dims[0]) + " elements are not whole " +
                            (traits ? traits->name : "?") + " blocks of " +
                            std::to_string(traits ? traits->block_elements : 0));
  }
  std::uint64_t bytes = *row;
  for (std::uint32_t d = 1; d < n_dims; ++d) {
    if (dims[d] <= 0) return unexpected("dimension " + std::to_string(d) + " is not positive");
    const auto n = static_cast<std::uint64_t>(dims[d]);
    if (bytes > UINT64_MAX / n) return unexpected(std::string("byte size overflows"));
    bytes *= n;
  }
  return bytes;
}

}  // namespace lpx::gguf
