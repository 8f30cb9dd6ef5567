#include "eval/window_logits.hpp"

#include <new>

#include "engine/device_forward.hpp"
#include "engine/engine_config.hpp"
#include "engine/transformer_forward.hpp"

namespace lpx::core::eval {

Expected<std::unique_ptr<WindowLogits>> WindowLogits::create(const ModelFile& file,
                                                             std::shared_ptr<PluginInstance> instance,
                                                             std::uint32_t window) {
  auto backend = Backend::adopt(std::move(instance));
  if (!backend) return unexpected(backend.error());
  auto owned = std::make_unique<Backend>(std::move(*backend));
  auto runnable = describe_runnable(file, window, *owned);
  if (!runnable) return unexpected(runnable.error());
  try {
    return std::unique_ptr<WindowLogits>(new WindowLogits(std::move(owned), std::move(*runnable), window));
  } catch (const EngineError& e) {
    return fail(e.code(), file.path() + ": " + e.what());
  } catch (const std::bad_alloc&) {
    return fail(LPX_ERR_OUT_OF_MEMORY, file.path() + ": out of memory sizing a " +
                                           std::to_string(window) + "-token window; lower --ctx");
  }
}

WindowLogits::WindowLogits(std::unique_ptr<Backend> backend, RunnableModel runnable, std::uint32_t window)
    : backend_(std::move(backend)), runnable_(std::move(runnable)), window_(window) {
  EngineConfig config;
  config.context_size = window;
  config.kv_cache_tokens = window;
  config.max_sequences = 1;
  config.batch_tokens = window;
  KvCacheShape shape = kv_cache_shape(runnable_.model, config);
  shape.host_storage = !backend_->has_device_models();
  cache_ = std::make_unique<KvCache>(shape);
  if (backend_->has_device_models()) {
    forward_ = std::make_unique<DeviceForward>(runnable_.model, *backend_, *cache_, window, 1, window);
  } else {
    forward_ = std::make_unique<TransformerForward>(runnable_.model, *backend_, *cache_, window, window);
  }
  blocks_ = BlockTable(window, config.block_size);
  batch_.reserve(window, 1);
}

Expected<bool> WindowLogits::run(std::span<const std::int32_t> tokens, std::uint32_t first_output,
                                 float* logits) {
  const auto n = static_cast<std::uint32_t>(tokens.size());
  if (n == 0 || n > window_ || first_output >= n) {
    return invalid_argument("a window of " + std::to_string(n) + " tokens (at most " + std::to_string(window_) +
                            ") with logits from position " + std::to_string(first_output));
  }
  if (!cache_->ensure(blocks_, n)) return fail(LPX_ERR_OUT_OF_MEMORY, std::string("the window's KV blocks"));
  batch_.clear();
  batch_.tokens.assign(tokens.begin(), tokens.end());
  for (std::uint32_t p = 0; p < n; ++p) batch_.positions.push_back(static_cast<std::int32_t>(p));
  for (std::uint32_t p = first_output; p < n; ++p) batch_.output_rows.push_back(p);
  batch_.sequences.push_back({&blocks_, 0, n});
  Expected<bool> result = true;
  try {
    forward_->run(batch_, logits);
  } catch (const EngineError& e) {
    result = fail(e.code(), e.what());
  }
  cache_->release(blocks_);
  return result;
}

}  // namespace lpx::core::eval
