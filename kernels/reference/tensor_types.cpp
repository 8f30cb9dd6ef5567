#include "reference/tensor_types.hpp"

namespace lpx::kernels::reference {

const TensorTypeTraits* traits_of(std::int32_t type) noexcept { return tensor_type_traits(type); }

std::optional<std::uint64_t> row_size_bytes(std::int32_t type, std::uint64_t n_elements) noexcept {
  return tensor_row_bytes(type, n_elements);
}

}  // namespace lpx::kernels::reference
