// Finds an architecture's tensors by name in a model file, collecting the first problem
// instead of failing at once, so a describe() reads as a list of tensors.
#pragma once

#include <string>

#include "lpx/kinds/tensor.h"
#include "model/model_file.hpp"

namespace lpx::core {

class TensorLookup {
 public:
  explicit TensorLookup(const ModelFile& file) : file_(file) {}

  const lpx_tensor_view* required(const std::string& name);
  const lpx_tensor_view* optional(const std::string& name) const { return file_.find_tensor(name); }
  // The first problem ("tensor 'blk.3.attn_q.weight' is missing"), or "".
  const std::string& error() const noexcept { return error_; }

 private:
  const ModelFile& file_;
  std::string error_;
};

}  // namespace lpx::core
