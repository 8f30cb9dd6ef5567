// The engine's life and its thread-safe calls: creation (the model checked and described, the
// KV cache sized, the forward pass chosen, the three stages wired), submit, cancel/wait,
// sessions and the stats. The engine thread's loop and steps are engine_step.cpp.
#include "engine/engine.hpp"

#include <algorithm>
#include <cstddef>
#include <set>

#include <spdlog/spdlog.h>

#include "engine/engine_error.hpp"
#include "engine/runnable_model.hpp"

namespace lpx::core {

Expected<std::unique_ptr<Engine>> Engine::create(EngineParts parts, EngineConfig config) {
  const ModelFile& file = *parts.file;
  if (config.max_sequences == 0 || config.batch_tokens == 0 || config.block_size == 0) {
    return invalid_argument(std::string("max_sequences, batch_tokens and block size must be positive"));
  }
  if (config.max_draft > 0 && parts.backend->has_device_models()) {
    return unsupported("speculative decoding runs on the cpu and cpu-scalar backends; backend '" +
                       parts.backend->name() + "' does not verify drafts yet (set [speculative] mode = \"off\")");
  }
  if (!parts.adapters.empty() && parts.backend->has_device_models()) {
    return unsupported("per-request LoRA adapters run on the cpu and cpu-scalar backends; backend '" +
                       parts.backend->name() + "' does not apply them yet (merge one with [model] lora instead)");
  }
  for (const auto& adapter : parts.adapters) {
    for (const LoraPair& p : adapter->pairs()) {
      for (const lpx_tensor_view* half : {p.a, p.b}) {
        if (!parts.backend->supports_type(half->type)) {
          return unsupported(adapter->path() + ": tensor '" + half->name + "' is of a type backend '" +
                             parts.backend->name() + "' does not multiply by");
        }
      }
    }
  }
  if (parts.draft_file && config.max_draft == 0) {
    return invalid_argument(parts.draft_file->path() + ": a draft model needs max_draft > 0");
  }
  auto runnable = describe_runnable(file, config.context_size, *parts.backend);
  if (!runnable) return unexpected(runnable.error());
  config.context_size = runnable->context_size;
  if (config.kv_cache_tokens == 0) config.kv_cache_tokens = config.context_size;
  if (config.kv_cache_tokens < config.context_size) {
    return invalid_argument("kv_cache_tokens (" + std::to_string(config.kv_cache_tokens) +
                      ") must hold at least one full context (" +
                      std::to_string(config.context_size) + ")");
  }
  // The summation order of float weights changes when a step has two rows or more (llama.cpp's
  // GEMM order, kept for its bits), so the rows of drafts would change the rounding of every
  // row of the step, and with it the answers.
  if (config.max_draft > 0 && has_float_matmuls(runnable->model.desc())) {
    return unsupported(file.path() + ": speculative decoding needs quantized matrix weights; this model "
                       "multiplies by F32/F16/BF16 weights, whose summation order changes with the rows of a "
                       "step, so drafts would change its answers (set [speculative] mode = \"off\")");
  }
  try {
    std::unique_ptr<DraftModel> draft;
    if (parts.draft_file) {
      auto made = DraftModel::create(std::move(parts.draft_file), parts.tokenizer->vocabulary(),
                                     runnable->h.n_vocab, *parts.backend, config);
      if (!made) return unexpected(made.error());
      draft = std::move(*made);
    }
    return std::unique_ptr<Engine>(new Engine(std::move(parts), config, std::move(runnable->h),
                                              std::move(runnable->model), std::move(draft)));
  } catch (const EngineError& e) {
    return fail(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return fail(LPX_ERR_OUT_OF_MEMORY, std::string("out of memory sizing the KV cache; lower kv_cache_tokens"));
  }
}

Engine::Engine(EngineParts parts, EngineConfig config, Hyperparameters h, TransformerModel model,
               std::unique_ptr<DraftModel> draft_model)
    : parts_(std::move(parts)),
      config_(config),
      h_(std::move(h)),
      model_(std::move(model)),
      draft_model_(std::move(draft_model)) {
  auto name = parts_.file->get_string("general.name");
  model_name_ = name ? *name : parts_.file->path();
  config_.kv_window = model_.kv_window();
  KvCacheShape shape = kv_cache_shape(model_, config_);
  shape.host_storage = !parts_.backend->has_device_models();
  cache_ = std::make_unique<KvCache>(shape);
  if (parts_.backend->has_device_models()) {
    auto device = std::make_unique<DeviceForward>(model_, *parts_.backend, *cache_,
                                                  config_.batch_tokens,
                                                  config_.max_sequences, config_.context_size);
    const char* steps = !device->can_queue() ? ""
                        : config_.overlap_steps  ? "; decode steps queued behind each other"
                                                 : "; each step alone (overlap_steps = false)";
    spdlog::info("engine: model on {}{}", device->describe(), steps);
    forward_ = std::move(device);
  } else {
    forward_ = std::make_unique<TransformerForward>(model_, *parts_.backend, *cache_,
                                                    config_.batch_tokens, config_.context_size, parts_.adapters);
  }
  batch_.reserve(config_.batch_tokens, config_.max_sequences * (1 + config_.max_draft));
  // Output rows per step: one per decoding sequence, and one per draft when it speculates.
  const std::size_t output_rows =
      std::min<std::size_t>(config_.batch_tokens, std::size_t{config_.max_sequences} * (1 + config_.max_draft));
  batch_requests_.reserve(output_rows);
  logits_.resize(output_rows * h_.n_vocab);
  picked_tokens_.resize(config_.max_sequences);
  draft_jobs_.reserve(config_.max_sequences);
  programs_.resize(config_.max_sequences);
  // The same capacities as batch_'s: a queued step's batch becomes batch_ (swapped).
  next_batch_.reserve(config_.batch_tokens, config_.max_sequences * (1 + config_.max_draft));
  next_requests_.reserve(output_rows);
  next_picks_.resize(config_.max_sequences);
  next_programs_.resize(config_.max_sequences);
  previous_outputs_.resize(config_.max_sequences);
  intake_ = std::make_unique<RequestIntake>(
      *parts_.tokenizer, parts_.chat_template ? &*parts_.chat_template : nullptr,
      parts_.chat_template_origin, *parts_.samplers, *cache_, config_, h_.n_vocab, draft_model_.get(),
      parts_.adapters);
  scheduler_ = std::make_unique<Scheduler>(*cache_, config_);
  output_ = std::make_unique<TokenOutput>(*parts_.tokenizer, config_.context_size, h_.n_vocab);
  spdlog::info("engine: {} ({} layers), backend '{}', context {} tokens, KV cache {} tokens "
               "({:.1f} MiB, f16, blocks of {}), up to {} sequences, {} tokens per step",
               model_name_, h_.n_layer, parts_.backend->name(), config_.context_size,
               cache_->total_positions(), static_cast<double>(cache_->bytes()) / (1 << 20),
               config_.block_size, config_.max_sequences, config_.batch_tokens);
  for (const auto& adapter : parts_.adapters) {
    spdlog::info("engine: LoRA adapter '{}' resident for requests that name it: {} (rank {}, {} weights, {:.1f} MiB)",
                 adapter->name(), adapter->path(), adapter->rank(), adapter->pairs().size(),
                 static_cast<double>(adapter->bytes()) / (1 << 20));
  }
  if (draft_model_) {
    spdlog::info("engine: speculative drafts from {}, up to {} per step (its KV cache {:.1f} MiB)",
                 draft_model_->path(), config_.max_draft,
                 static_cast<double>(draft_model_->kv_cache_bytes()) / (1 << 20));
  }
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
  if (out.struct_size >= offsetof(lpx_engine_stats, steps_queued_behind) + sizeof(out.steps_queued_behind)) {
    out.steps_queued_behind = steps_queued_behind();
  }
}

}  // namespace lpx::core
