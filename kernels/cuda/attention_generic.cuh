// attention() for head sizes without a flash-decoding instantiation (attention_generic.cu).
#pragma once

#include "cuda/launch.hpp"

namespace lpx::kernels::cuda::detail {

bool attention_any_head_dim_supports(int head_dim) noexcept;
void attention_any_head_dim(const AttentionArgs& args, cudaStream_t stream);

}  // namespace lpx::kernels::cuda::detail
