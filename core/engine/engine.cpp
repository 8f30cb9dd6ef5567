// The engine's life: creation (the model checked and described, the KV cache sized, the
// forward pass chosen), the engine thread's loop, sessions, cancel/wait and the stats.
#include "engine/engine_internals.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>
#include <set>

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include "engine/engine_error.hpp"
#include "model/model_validation.hpp"
#include "lpx/cpp/status.hpp"
#include "lpx/cpp/utf8.hpp"

namespace lpx::core {

Expected<std::unique_ptr<Engine>> Engine::create(EngineParts parts, EngineConfig config) {
  const ModelFile& file = *parts.file;
  auto h = validate_model(file);  // hyperparameters, every tensor's shape and extent
  if (!h) return unexpected(h.error());
  const Architecture* architecture = find_architecture(h->architecture);
  if (architecture == nullptr) {
    return unsupported(file.path() + ": architecture '" + h->architecture + "' is not supported");
  }
  auto model = architecture->describe(file, *h);
  if (!model) return unexpected(model.error());
  // Before anything is sized or loaded: a backend never sees a model it cannot run.
  if (auto runs = parts.backend->check_features(model->desc()); !runs) {
    return unexpected(runs.error().with_context(file.path()));
  }
  for (const lpx_tensor_view& t : file.tensors()) {
    if (t.n_dims == 2 && !parts.backend->supports_type(t.type)) {
      return unsupported(file.path() + ": tensor '" + t.name + "' has a type backend '" +
                        parts.backend->name() + "' cannot multiply");
    }
  }

  if (config.context_size == 0) config.context_size = std::min<std::uint32_t>(h->n_ctx_train ? h->n_ctx_train : 8192, 8192);
  if (config.kv_cache_tokens == 0) config.kv_cache_tokens = config.context_size;
  if (config.max_sequences == 0 || config.batch_tokens == 0 || config.block_size == 0) {
    return invalid_argument(std::string("max_sequences, batch_tokens and block size must be positive"));
  }
  if (config.kv_cache_tokens < config.context_size) {
    return invalid_argument("kv_cache_tokens (" + std::to_string(config.kv_cache_tokens) +
                      ") must hold at least one full context (" +
                      std::to_string(config.context_size) + ")");
  }
  if (h->n_ctx_train != 0 && config.context_size > h->n_ctx_train) {
    spdlog::warn("context {} exceeds the {} positions the model was trained on; quality may drop",
                 config.context_size, h->n_ctx_train);
  }
  try {
    return std::unique_ptr<Engine>(
        new Engine(std::move(parts), config, std::move(*h), std::move(*model)));
  } catch (const EngineError& e) {
    return internal_error(std::string(e.what()));
  } catch (const std::bad_alloc&) {
    return fail(LPX_ERR_OUT_OF_MEMORY, std::string("out of memory sizing the KV cache; lower kv_cache_tokens"));
  }
}

Engine::Engine(EngineParts parts, EngineConfig config, Hyperparameters h, TransformerModel model)
    : parts_(std::move(parts)), config_(config), h_(std::move(h)), model_(std::move(model)) {
  auto name = parts_.file->get_string("general.name");
  model_name_ = name ? *name : parts_.file->path();
  KvCacheShape shape;
  shape.n_layer = model_.desc().n_layer;
  shape.n_kv_heads = model_.desc().n_head_kv;
  shape.head_dim = model_.desc().head_dim;
  shape.block_size = config_.block_size;
  shape.n_blocks = (config_.kv_cache_tokens + config_.block_size - 1) / config_.block_size;
  shape.host_storage = !parts_.backend->has_device_models();
  cache_ = std::make_unique<KvCache>(shape);
  if (parts_.backend->has_device_models()) {
    auto device = std::make_unique<DeviceForward>(model_, *parts_.backend, *cache_,
                                                  config_.batch_tokens,
                                                  config_.max_sequences, config_.context_size);
    spdlog::info("engine: model on {}", device->describe());
    forward_ = std::move(device);
  } else {
    forward_ = std::make_unique<TransformerForward>(model_, *parts_.backend, *cache_,
                                                    config_.batch_tokens, config_.context_size);
  }
  batch_.reserve(config_.batch_tokens, config_.max_sequences);
  batch_requests_.reserve(config_.max_sequences);
  logits_.resize(std::size_t{config_.max_sequences} * h_.n_vocab);
  picked_tokens_.resize(config_.max_sequences);
  programs_.resize(config_.max_sequences);
  running_.reserve(config_.max_sequences);
  spdlog::info("engine: {} ({} layers), backend '{}', context {} tokens, KV cache {} tokens "
               "({:.1f} MiB, f16, blocks of {}), up to {} sequences, {} tokens per step",
               model_name_, h_.n_layer, parts_.backend->name(), config_.context_size,
               cache_->total_positions(), static_cast<double>(cache_->bytes()) / (1 << 20),
               config_.block_size, config_.max_sequences, config_.batch_tokens);
  thread_ = std::thread([this] { loop(); });
}

Engine::~Engine() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Engine::cancel(std::uint64_t request_id) {
  std::lock_guard lock(mutex_);
  for (auto& r : waiting_) {
    if (r->id == request_id) r->cancel = true;
  }
  for (auto& r : running_) {
    if (r->id == request_id) r->cancel = true;
  }
  wake_.notify_all();
}

void Engine::wait(std::uint64_t request_id) {
  std::unique_lock lock(mutex_);
  finished_.wait(lock, [&] { return live_.find(request_id) == live_.end(); });
}

std::uint64_t Engine::session_create() {
  std::lock_guard lock(mutex_);
  const std::uint64_t id = next_id_++;
  auto session = std::make_unique<Session>();
  session->sequence.blocks = BlockTable(config_.context_size, config_.block_size);
  session->sequence.tokens.reserve(config_.context_size);
  sessions_[id] = std::move(session);
  return id;
}

void Engine::session_destroy(std::uint64_t session) {
  std::unique_lock lock(mutex_);
  auto it = sessions_.find(session);
  if (it == sessions_.end()) return;
  // Cancel its request and wait until it has let go of the session.
  for (auto& r : waiting_) if (r->session == session) r->cancel = true;
  for (auto& r : running_) if (r->session == session) r->cancel = true;
  wake_.notify_all();
  finished_.wait(lock, [&] { return !it->second->busy; });
  cache_->release(it->second->sequence.blocks);
  sessions_.erase(it);
}

void Engine::info(lpx_engine_info& out) const {
  out.model_name = model_name_.c_str();
  out.model_path = parts_.file->path().c_str();
  out.context_size = config_.context_size;
  out.max_sequences = config_.max_sequences;
  out.has_chat_template = parts_.chat_template ? 1 : 0;
  if (out.struct_size >= offsetof(lpx_engine_info, backend) + sizeof(out.backend)) {
    out.backend = parts_.backend->name().c_str();
  }
}

void Engine::stats(lpx_engine_stats& out) const {
  std::lock_guard lock(mutex_);  // the cache's free list changes under mutex_ only
  out.waiting_requests = static_cast<std::uint32_t>(waiting_.size());
  // Finished requests leave running_ at the end of their step; they hold nothing any more.
  out.running_requests = static_cast<std::uint32_t>(std::count_if(
      running_.begin(), running_.end(), [](const std::unique_ptr<Request>& r) { return r->sequence != nullptr; }));
  out.kv_block_size = cache_->shape().block_size;
  out.kv_blocks_total = cache_->shape().n_blocks;
  out.kv_blocks_used = cache_->shape().n_blocks - cache_->free_blocks();
  out.prompt_tokens = prompt_tokens_computed_.load(std::memory_order_relaxed);
  out.generated_tokens = tokens_generated_.load(std::memory_order_relaxed);
  out.steps = steps_.load(std::memory_order_relaxed);
}

// --- the engine thread ---------------------------------------------------------------------------

void Engine::loop() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !waiting_.empty() || !running_.empty(); });
      if (stopping_) {
        for (auto& r : running_) r->cancel = true;
        for (auto& r : waiting_) r->cancel = true;
      }
      // Cancelled waiting requests end here; the rest are admitted in order while they fit.
      while (!waiting_.empty()) {
        Request& front = *waiting_.front();
        if (!front.cancel && running_.size() >= config_.max_sequences) break;
        if (!front.cancel && !admit(front)) {
          if (!running_.empty()) break;  // blocks come back as running requests finish
          // Nothing runs, so only idle sessions hold blocks: drop their cached prefixes.
          evict_idle_sessions();
          if (!admit(front)) {
            front.admission_error = "the KV cache cannot hold this request";
          }
        }
        running_.push_back(std::move(waiting_.front()));
        waiting_.pop_front();
      }
      if (stopping_ && running_.empty()) return;
    }
    step();
  }
}

}  // namespace lpx::core
