#include "engine/runnable_model.hpp"

#include <algorithm>
#include <cstddef>

#include <spdlog/spdlog.h>

#include "model/architecture.hpp"
#include "model/model_validation.hpp"

namespace lpx::core {

Expected<RunnableModel> describe_runnable(const ModelFile& file, std::uint32_t context_size,
                                          const Backend& backend) {
  auto h = validate_model(file);  // hyperparameters, every tensor's shape and extent
  if (!h) return unexpected(h.error());
  const Architecture* architecture = find_architecture(h->architecture);
  if (architecture == nullptr) {
    return unsupported(file.path() + ": architecture '" + h->architecture + "' is not supported");
  }
  if (context_size == 0) context_size = std::min<std::uint32_t>(h->n_ctx_train ? h->n_ctx_train : 8192, 8192);
  if (h->n_ctx_train != 0 && context_size > h->n_ctx_train) {
    spdlog::warn("{}: context {} exceeds the {} positions the model was trained on; quality may drop",
                 file.path(), context_size, h->n_ctx_train);
  }
  auto model = architecture->describe(file, *h, RunShape{context_size});
  if (!model) return unexpected(model.error());
  if (auto runs = backend.check_features(model->desc()); !runs) {
    return unexpected(runs.error().with_context(file.path()));
  }
  for (const lpx_tensor_view& t : file.tensors()) {
    if (t.n_dims == 2 && !backend.supports_type(t.type)) {
      return unsupported(file.path() + ": tensor '" + t.name + "' has a type backend '" +
                         backend.name() + "' cannot multiply");
    }
  }
  return RunnableModel{std::move(*h), std::move(*model), context_size};
}

KvCacheShape kv_cache_shape(const TransformerModel& model, const EngineConfig& config) {
  KvCacheShape shape;
  shape.n_layer = model.desc().n_layer;
  shape.n_kv_heads = model.desc().n_head_kv;
  shape.head_dim = model.desc().head_dim;
  shape.block_size = config.block_size;
  shape.n_blocks = (config.kv_cache_tokens + config.block_size - 1) / config.block_size;
  return shape;
}

bool has_float_matmuls(const lpx_transformer_desc& d) {
  const auto is_float = [](const lpx_tensor_view* t) {
    return t != nullptr && (t->type == LPX_TENSOR_F32 || t->type == LPX_TENSOR_F16 || t->type == LPX_TENSOR_BF16);
  };
  if (is_float(d.output)) return true;
  for (std::uint32_t l = 0; l < d.n_layer; ++l) {
    const auto& layer = *reinterpret_cast<const lpx_transformer_layer*>(
        reinterpret_cast<const char*>(d.layers) + std::size_t{l} * d.layer_stride);
    for (const lpx_tensor_view* w : {layer.wq, layer.wk, layer.wv, layer.wqkv, layer.wo, layer.ffn_gate,
                                     layer.ffn_up, layer.ffn_gate_up, layer.ffn_down}) {
      if (is_float(w)) return true;
    }
  }
  return false;
}

}  // namespace lpx::core
