#include "model/tensor_lookup.hpp"

namespace lpx::core {

const lpx_tensor_view* TensorLookup::required(const std::string& name) {
  const lpx_tensor_view* view = file_.find_tensor(name);
  if (view == nullptr && error_.empty()) error_ = "tensor '" + name + "' is missing";
  return view;
}

}  // namespace lpx::core
