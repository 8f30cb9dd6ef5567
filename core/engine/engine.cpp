// The engine's life and its thread-safe calls: creation (the model checked and described, the
// KV cache sized, the forward pass chosen, the three stages wired), submit, cancel/wait,
// sessions and the stats. The engine thread's loop and steps are engine_step.cpp.
#include "engine/engine.hpp"

#include <algorithm>
#include <cstddef>
#include <set>

#include <spdlog/spdlog.h>

#include "engine/engine_error.hpp"
#include "model/model_validation.hpp"

namespace lpx::core {

namespace {

// Whether a matrix product of the model takes float weights. Their summation order changes
// when a step has two rows or more (llama.cpp's GEMM order, kept for its bits), so the rows of
// drafts would change the rounding of every row of the step, and with it the answers.
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

}  // namespace

Expected<std::unique_ptr<Engine>> Engine::create(EngineParts parts, EngineConfig config) {
  const ModelFile& file = *parts.file;
  auto h = validate_model(file);  // hyperparameters, every tensor's shape and extent
  if (!h) return unexpected(h.error());
  const Architecture* architecture = find_architecture(h->architecture);
  if (architecture == nullptr) {
    return unsupported(file.path() + ": architecture '" + h->architecture + "' is not supported");
  }
  if (config.context_size == 0) config.context_size = std::min<std::uint32_t>(h->n_ctx_train ? h->n_ctx_train : 8192, 8192);
  if (config.kv_cache_tokens == 0) config.kv_cache_tokens = config.context_size;
  if (config.max_sequences == 0 || config.batch_tokens == 0 || config.block_size == 0) {
    return invalid_argument(std::string("max_sequences, batch_tokens and block size must be positive"));
  }
  if (config.max_draft > 0 && parts.backend->has_device_models()) {
    return unsupported("speculative decoding runs on the cpu and cpu-scalar backends; backend '" +
                       parts.backend->name() + "' does not verify drafts yet (set [speculative] mode = \"off\")");
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
  auto model = architecture->describe(file, *h, RunShape{config.context_size});
  if (!model) return unexpected(model.error());
  if (config.max_draft > 0 && has_float_matmuls(model->desc())) {
    return unsupported(file.path() + ": speculative decoding needs quantized matrix weights; this model "
                       "multiplies by F32/F16/BF16 weights, whose summation order changes with the rows of a "
                       "step, so drafts would change its answers (set [speculative] mode = \"off\")");
  }
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

  try {
    return std::unique_ptr<Engine>(
        new Engine(std::move(parts), config, std::move(*h), std::move(*model)));
  } catch (const EngineError& e) {
    return fail(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return fail(LPX_ERR_OUT_OF_MEMORY, std::string("out of memory sizing the KV cache; lower kv_cache_tokens"));
  }
}

Engine::Engine(EngineParts parts, EngineConfig config, Hyperparameters h, TransformerModel model)
    : parts_(std::move(parts)), config_(config), h_(std::move(h)), model_(std::move(model)) {
  auto name = parts_.file->get_string("general.name");
  model_name_ = name ? *name : parts_.file->path();
  config_.kv_window = model_.kv_window();
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
  batch_.reserve(config_.batch_tokens, config_.max_sequences * (1 + config_.max_draft));
  // Output rows per step: one per decoding sequence, and one per draft when it speculates.
  const std::size_t output_rows =
      std::min<std::size_t>(config_.batch_tokens, std::size_t{config_.max_sequences} * (1 + config_.max_draft));
  batch_requests_.reserve(output_rows);
  logits_.resize(output_rows * h_.n_vocab);
  picked_tokens_.resize(config_.max_sequences);
  programs_.resize(config_.max_sequences);
  intake_ = std::make_unique<RequestIntake>(
      *parts_.tokenizer, parts_.chat_template ? &*parts_.chat_template : nullptr,
      parts_.chat_template_origin, *parts_.samplers, *cache_, config_, h_.n_vocab);
  scheduler_ = std::make_unique<Scheduler>(*cache_, config_);
  output_ = std::make_unique<TokenOutput>(*parts_.tokenizer, config_.context_size, h_.n_vocab);
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

Expected<std::vector<std::int32_t>> Engine::prompt_tokens(const lpx_request& request) const {
  return intake_->prompt_tokens(request);
}

Expected<std::uint64_t> Engine::submit(const lpx_request& caller_request) {
  auto ids = submit_together({&caller_request, 1});
  if (!ids) return unexpected(std::move(ids).error());
  return ids->front();
}

Expected<std::vector<std::uint64_t>> Engine::submit_together(std::span<const lpx_request> requests) {
  std::vector<std::unique_ptr<Request>> prepared;  // checked outside the lock
  prepared.reserve(requests.size());
  for (const lpx_request& request : requests) {
    auto r = intake_->prepare(request);
    if (!r) return unexpected(std::move(r).error());
    prepared.push_back(std::move(*r));
  }
  std::vector<std::uint64_t> ids;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return unavailable("the engine is shutting down");
    std::set<std::uint64_t> claimed;  // every session first: all or nothing
    for (const auto& r : prepared) {
      if (r->session == 0) continue;
      const std::string session = std::to_string(r->session);
      const Session* s = scheduler_->session(r->session);
      if (s == nullptr) return not_found("unknown session " + session, "session");
      if (s->busy || !claimed.insert(r->session).second) {
        return fail(LPX_ERR_CONFLICT, "session " + session + " already has a request running",
                    "session");
      }
    }
    for (auto& r : prepared) {
      if (r->session != 0) scheduler_->session(r->session)->busy = true;
      r->id = next_id_++;
      ids.push_back(r->id);
      live_[r->id] = true;
      scheduler_->enqueue(std::move(r));
    }
  }
  wake_.notify_all();
  return ids;
}

void Engine::cancel(std::uint64_t request_id) {
  std::lock_guard lock(mutex_);
  scheduler_->cancel(request_id);
  wake_.notify_all();
}

void Engine::wait(std::uint64_t request_id) {
  std::unique_lock lock(mutex_);
  finished_.wait(lock, [&] { return live_.find(request_id) == live_.end(); });
}

std::uint64_t Engine::session_create() {
  std::lock_guard lock(mutex_);
  const std::uint64_t id = next_id_++;
  scheduler_->add_session(id);
  return id;
}

void Engine::session_destroy(std::uint64_t session) {
  std::unique_lock lock(mutex_);
  const Session* s = scheduler_->session(session);
  if (s == nullptr) return;
  // Cancel its request and wait until it has let go of the session.
  scheduler_->cancel_session(session);
  wake_.notify_all();
  finished_.wait(lock, [&] { return !s->busy; });
  scheduler_->remove_session(session);
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
  if (out.struct_size >= offsetof(lpx_engine_info, chat_template) + sizeof(out.chat_template)) {
    out.chat_template = parts_.chat_template ? parts_.chat_template_source.c_str() : nullptr;
  }
}

void Engine::stats(lpx_engine_stats& out) const {
  std::lock_guard lock(mutex_);  // the cache's free list changes under mutex_ only
  out.waiting_requests = scheduler_->waiting_count();
  out.running_requests = scheduler_->running_count();
  out.kv_block_size = cache_->shape().block_size;
  out.kv_blocks_total = cache_->shape().n_blocks;
  out.kv_blocks_used = cache_->shape().n_blocks - cache_->free_blocks();
  out.prompt_tokens = prompt_tokens_computed_.load(std::memory_order_relaxed);
  out.generated_tokens = tokens_generated_.load(std::memory_order_relaxed);
  out.steps = steps_.load(std::memory_order_relaxed);
  if (out.struct_size >= offsetof(lpx_engine_stats, prefix_cache_blocks) + sizeof(out.prefix_cache_blocks)) {
    const PrefixCacheCounters& c = cache_->counters();
    out.prefix_cache_hits = c.hit_blocks;
    out.prefix_cache_misses = c.miss_blocks;
    out.prefix_cache_evictions = c.evicted_blocks;
    out.prefix_cache_blocks = cache_->cached_blocks();
  }
  if (out.struct_size >= offsetof(lpx_engine_stats, spec_accepted_tokens) + sizeof(out.spec_accepted_tokens)) {
    out.spec_draft_tokens = draft_tokens_.load(std::memory_order_relaxed);
    out.spec_accepted_tokens = accepted_tokens_.load(std::memory_order_relaxed);
  }
}

}  // namespace lpx::core
