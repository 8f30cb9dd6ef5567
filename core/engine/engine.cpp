#include "engine/engine.hpp"

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
#include "engine/sampler_chain.hpp"
#include "engine/stop_matcher.hpp"
#include "model/model_validation.hpp"
#include "lpx/cpp/status.hpp"
#include "lpx/cpp/utf8.hpp"

namespace lpx::core {

using Clock = std::chrono::steady_clock;

// A sequence of positions in the KV cache: the tokens whose K/V it holds, in order.
struct Engine::Sequence {
  BlockTable blocks;
  std::vector<std::int32_t> tokens;
};

struct Engine::Session {
  Sequence sequence;
  bool busy = false;
};

struct Engine::Request {
  std::uint64_t id = 0;
  std::vector<std::int32_t> prompt;
  std::uint32_t max_tokens = 0;
  std::uint32_t positions_needed = 0;  // cache positions reserved at admission
  std::unique_ptr<SamplerChain> sampler;
  StopMatcher stops;
  std::optional<IncrementalDecoder> decoder;
  void* user = nullptr;
  int32_t (*on_token)(void*, const lpx_token_event*) = nullptr;
  void (*on_done)(void*, const lpx_request_result*) = nullptr;
  std::uint64_t session = 0;

  std::unique_ptr<Sequence> own_sequence;
  Sequence* sequence = nullptr;
  std::uint32_t prompt_done = 0;  // prompt tokens whose K/V are in the cache
  std::uint32_t cached = 0;       // of those, reused from the session
  std::uint32_t generated = 0;
  std::int32_t next_token = -1;   // sampled, to be fed in the next step
  std::atomic<bool> cancel{false};
  bool context_end_is_length = false;
  bool ignore_end_of_generation = false;  // LPX_REQUEST_IGNORE_END_OF_GENERATION
  bool logprobs = false;
  std::vector<lpx_token_logprob> top;  // top_logprobs entries, sized at submit
  lpx_token_logprob chosen_logprob{};
  std::string repaired;  // a piece with ill-formed UTF-8, repaired (capacity kept between tokens)
  std::string admission_error;  // set when the request can never fit; it ends at the next step
  Clock::time_point submitted, first_token, last_token;
};

namespace {

std::uint32_t clamp_u32(std::uint64_t v) {
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(v, UINT32_MAX));
}

Expected<bool> check_utf8(const char* text, const char* what) {
  if (!utf8::is_well_formed(text)) return unexpected(std::string(what) + " is not valid UTF-8");
  return true;
}

}  // namespace

Expected<std::unique_ptr<Engine>> Engine::create(EngineParts parts, EngineConfig config) {
  const ModelFile& file = *parts.file;
  auto h = validate_model(file);  // hyperparameters, every tensor's shape and extent
  if (!h) return unexpected(h.error());
  const Architecture* architecture = find_architecture(h->architecture);
  if (architecture == nullptr) {
    return unexpected(file.path() + ": architecture '" + h->architecture + "' is not supported");
  }
  auto model = architecture->describe(file, *h);
  if (!model) return unexpected(model.error());
  // Before anything is sized or loaded: a backend never sees a model it cannot run.
  if (auto runs = parts.backend->check_features(model->desc()); !runs) {
    return unexpected(file.path() + ": " + runs.error());
  }
  for (const lpx_tensor_view& t : file.tensors()) {
    if (t.n_dims == 2 && !parts.backend->supports_type(t.type)) {
      return unexpected(file.path() + ": tensor '" + t.name + "' has a type backend '" +
                        parts.backend->name() + "' cannot multiply");
    }
  }

  if (config.context_size == 0) config.context_size = std::min<std::uint32_t>(h->n_ctx_train ? h->n_ctx_train : 8192, 8192);
  if (config.kv_cache_tokens == 0) config.kv_cache_tokens = config.context_size;
  if (config.max_sequences == 0 || config.batch_tokens == 0 || config.block_size == 0) {
    return unexpected(std::string("max_sequences, batch_tokens and block size must be positive"));
  }
  if (config.kv_cache_tokens < config.context_size) {
    return unexpected("kv_cache_tokens (" + std::to_string(config.kv_cache_tokens) +
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
    return unexpected(std::string(e.what()));
  } catch (const std::bad_alloc&) {
    return unexpected(std::string("out of memory sizing the KV cache; lower kv_cache_tokens"));
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

Expected<std::vector<std::int32_t>> Engine::prompt_tokens(const lpx_request& request) const {
  const bool has_prompt = request.prompt != nullptr;
  const bool has_messages = request.messages != nullptr || request.message_count != 0;
  const bool has_tokens = request.prompt_tokens != nullptr || request.prompt_token_count != 0;
  if (int{has_prompt} + int{has_messages} + int{has_tokens} != 1) {
    return unexpected(
        std::string("a request needs exactly one of 'prompt', 'messages' and 'prompt_tokens'"));
  }
  const Tokenizer& tokenizer = *parts_.tokenizer;
  if (has_tokens) {
    if (request.prompt_tokens == nullptr) return unexpected(std::string("prompt_tokens is NULL"));
    std::vector<std::int32_t> tokens(request.prompt_tokens,
                                     request.prompt_tokens + request.prompt_token_count);
    for (std::int32_t t : tokens) {
      if (t < 0 || t >= tokenizer.vocab_size()) {
        return unexpected("prompt token " + std::to_string(t) + " is not in the vocabulary (" +
                          std::to_string(tokenizer.vocab_size()) + " tokens)");
      }
    }
    return tokens;
  }
  if (has_prompt) {
    if (auto ok = check_utf8(request.prompt, "the prompt"); !ok) return unexpected(ok.error());
    Tokenizer::EncodeOptions options;
    options.add_eos = false;
    return tokenizer.encode(request.prompt, options);
  }
  if (!parts_.chat_template) {
    return unexpected("the model has no chat template (set [model] chat_template in the "
                      "pipeline to a Jinja file)");
  }
  boost::json::array messages;
  for (std::size_t i = 0; i < request.message_count; ++i) {
    const lpx_chat_message& m = request.messages[i];
    if (m.role == nullptr || m.content == nullptr) {
      return unexpected("message " + std::to_string(i) + " has no role or content");
    }
    if (auto ok = check_utf8(m.content, "a message"); !ok) return unexpected(ok.error());
    messages.push_back(boost::json::object{{"role", m.role}, {"content", m.content}});
  }
  boost::json::object context{{"messages", std::move(messages)},
                              {"add_generation_prompt", true}};
  auto piece = [&](std::optional<std::int32_t> id) -> std::string {
    if (!id) return {};
    auto text = tokenizer.piece(*id, true);
    return text ? std::string(*text) : std::string{};
  };
  const std::string bos = piece(tokenizer.bos());
  context["bos_token"] = bos;
  context["eos_token"] = piece(tokenizer.eos());
  auto text = parts_.chat_template->render(context);
  if (!text) return unexpected("chat template of " + parts_.chat_template_origin + ": " + text.error());
  Tokenizer::EncodeOptions options;
  options.parse_special = true;
  options.add_eos = false;
  // Templates that write the BOS themselves must not get a second one.
  options.add_bos = bos.empty() || text->compare(0, bos.size(), bos) != 0;
  return tokenizer.encode(*text, options);
}

Expected<std::uint64_t, Status> Engine::submit(const lpx_request& caller_request) {
  auto ids = submit_together({&caller_request, 1});
  if (!ids) return unexpected(std::move(ids).error());
  return ids->front();
}

Expected<std::vector<std::uint64_t>, Status> Engine::submit_together(
    std::span<const lpx_request> requests) {
  std::vector<std::unique_ptr<Request>> prepared;
  prepared.reserve(requests.size());
  for (const lpx_request& request : requests) {
    auto r = prepare(request);
    if (!r) return unexpected(std::move(r).error());
    prepared.push_back(std::move(*r));
  }
  std::vector<std::uint64_t> ids;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return unexpected(Status(LPX_ERR_UNAVAILABLE, "the engine is shutting down"));
    std::set<std::uint64_t> claimed;  // every session first: all or nothing
    for (const auto& r : prepared) {
      if (r->session == 0) continue;
      const std::string session = std::to_string(r->session);
      auto it = sessions_.find(r->session);
      if (it == sessions_.end()) {
        return unexpected(Status(LPX_ERR_NOT_FOUND, "unknown session " + session, "session"));
      }
      if (it->second->busy || !claimed.insert(r->session).second) {
        return unexpected(Status(LPX_ERR_CONFLICT,
                                 "session " + session + " already has a request running", "session"));
      }
    }
    for (auto& r : prepared) {
      if (r->session != 0) sessions_.find(r->session)->second->busy = true;
      r->id = next_id_++;
      ids.push_back(r->id);
      live_[r->id] = true;
      waiting_.push_back(std::move(r));
    }
  }
  wake_.notify_all();
  return ids;
}

Expected<std::unique_ptr<Engine::Request>, Status> Engine::prepare(
    const lpx_request& caller_request) {
  const auto invalid = [](std::string message, std::string field = {}) {
    return unexpected(Status(LPX_ERR_INVALID_ARGUMENT, std::move(message), std::move(field)));
  };
  // lpx_request appeared in ABI 1.2 and grew in 1.3; a smaller (older) request is copied into a
  // zeroed current one, so the fields it lacks read as 0.
  constexpr std::size_t kSize_1_2 = offsetof(lpx_request, logprobs);
  if (caller_request.struct_size < kSize_1_2) {
    return invalid("request.struct_size is " + std::to_string(caller_request.struct_size) +
                   "; an lpx_request (ABI 1.2) has at least " + std::to_string(kSize_1_2) +
                   " bytes");
  }
  lpx_request request{};
  std::memcpy(&request, &caller_request,
              std::min<std::size_t>(caller_request.struct_size, sizeof(lpx_request)));
  if (request.top_logprobs > LPX_MAX_TOP_LOGPROBS) {
    return invalid("top_logprobs is " + std::to_string(request.top_logprobs) + "; at most " +
                       std::to_string(LPX_MAX_TOP_LOGPROBS),
                   "top_logprobs");
  }
  if (request.on_done == nullptr) return invalid("request.on_done is required");
  // The request field its input came from, which the prompt's refusals are about.
  const char* input = request.messages != nullptr || request.message_count != 0 ? "messages"
                                                                                : "prompt";
  auto prompt = prompt_tokens(request);
  if (!prompt) return invalid(prompt.error(), input);
  if (prompt->empty()) return invalid("the prompt is empty", input);
  const auto n_prompt = static_cast<std::uint64_t>(prompt->size());
  if (n_prompt >= config_.context_size) {
    return unexpected(Status(LPX_ERR_RESOURCE_EXHAUSTED,
                             "the prompt has " + std::to_string(n_prompt) +
                                 " tokens; the context holds " +
                                 std::to_string(config_.context_size) +
                                 " (prompt + at least 1 generated)",
                             input));
  }
  if (request.max_tokens != 0 && n_prompt + request.max_tokens > config_.context_size) {
    return unexpected(Status(LPX_ERR_RESOURCE_EXHAUSTED,
                             "prompt (" + std::to_string(n_prompt) + " tokens) + max_tokens (" +
                                 std::to_string(request.max_tokens) + ") exceeds the context (" +
                                 std::to_string(config_.context_size) + " tokens)",
                             "max_tokens"));
  }
  auto r = std::make_unique<Request>();
  r->prompt = std::move(*prompt);
  r->max_tokens = request.max_tokens;
  r->positions_needed = request.max_tokens != 0
                            ? clamp_u32(n_prompt + request.max_tokens)
                            : config_.context_size;
  std::vector<std::string> stops;
  for (std::size_t i = 0; i < request.stop_count; ++i) {
    if (request.stop[i] == nullptr) return invalid("stop string " + std::to_string(i) + " is NULL", "stop");
    if (auto ok = check_utf8(request.stop[i], "a stop string"); !ok) return invalid(ok.error(), "stop");
    stops.emplace_back(request.stop[i]);
  }
  r->stops = StopMatcher(std::move(stops));

  const lpx_sampling_overrides* sampling = request.sampling;
  std::vector<LogitBias> bias;
  if (sampling != nullptr) {
    for (std::size_t i = 0; i < sampling->logit_bias_count; ++i) {
      const std::int32_t token = sampling->logit_bias_tokens[i];
      const float value = sampling->logit_bias_values[i];
      if (token < 0 || static_cast<std::uint32_t>(token) >= h_.n_vocab) {
        return invalid("logit_bias: token " + std::to_string(token) + " is not in the vocabulary (" +
                           std::to_string(h_.n_vocab) + " tokens)",
                       "logit_bias");
      }
      if (std::isnan(value) || value == INFINITY) {
        return invalid("logit_bias: the bias of token " + std::to_string(token) +
                          " must be a number or -infinity");
      }
      bias.push_back({token, value});
    }
  }
  auto links = parts_.samplers->links(sampling);
  if (!links) return unexpected(links.error());  // with its code and field
  std::uint64_t seed = 0;
  if (sampling != nullptr && (sampling->set & LPX_SET_SEED)) {
    seed = sampling->seed;
  } else {
    seed = (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  }
  try {
    r->sampler = std::make_unique<SamplerChain>(std::move(*links), seed, h_.n_vocab, std::move(bias));
  } catch (const EngineError& e) {
    return invalid(e.what());
  }
  r->decoder.emplace(*parts_.tokenizer);
  r->logprobs = request.logprobs != 0 || request.top_logprobs != 0;
  r->top.resize(request.top_logprobs);
  r->context_end_is_length = (request.flags & LPX_REQUEST_CONTEXT_END_IS_LENGTH) != 0;
  r->ignore_end_of_generation = (request.flags & LPX_REQUEST_IGNORE_END_OF_GENERATION) != 0;
  r->user = request.user;
  r->on_token = request.on_token;
  r->on_done = request.on_done;
  r->session = request.session;
  r->submitted = Clock::now();
  if (cache_->blocks_for(r->positions_needed) > cache_->shape().n_blocks) {
    return unexpected(Status(LPX_ERR_RESOURCE_EXHAUSTED,
                             "the request needs " + std::to_string(r->positions_needed) +
                                 " positions of KV cache; the pool holds " +
                                 std::to_string(cache_->total_positions()),
                             "max_tokens"));
  }
  return r;
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

bool Engine::admit(Request& r) {
  Sequence* sequence = nullptr;
  if (r.session != 0) {
    Sequence& s = sessions_.at(r.session)->sequence;
    // Reuse the longest common prefix, but recompute at least the last prompt token: its logits
    // are needed.
    std::size_t common = 0;
    const std::size_t limit = std::min(s.tokens.size(), r.prompt.size() - 1);
    while (common < limit && s.tokens[common] == r.prompt[common]) ++common;
    s.tokens.resize(common);
    cache_->truncate(s.blocks, static_cast<std::uint32_t>(common));
    sequence = &s;
  } else {
    r.own_sequence = std::make_unique<Sequence>();
    r.own_sequence->blocks = BlockTable(config_.context_size, config_.block_size);
    r.own_sequence->tokens.reserve(r.positions_needed);
    sequence = r.own_sequence.get();
  }
  if (!cache_->ensure(sequence->blocks, r.positions_needed)) {
    r.own_sequence.reset();
    return false;
  }
  r.sequence = sequence;
  r.cached = static_cast<std::uint32_t>(sequence->tokens.size());
  r.prompt_done = r.cached;
  return true;
}

void Engine::evict_idle_sessions() {
  for (auto& [id, session] : sessions_) {
    if (session->busy) continue;
    session->sequence.tokens.clear();
    cache_->release(session->sequence.blocks);
  }
}

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

void Engine::build_batch() {
  batch_.clear();
  batch_requests_.clear();
  std::uint32_t budget = config_.batch_tokens;
  // Decoding sequences first (one row each): they are latency-bound; prefill fills the rest, up
  // to prefill_tokens_while_decoding when anything decodes.
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1 && batch_.rows() > 0) {
      budget = std::min(budget, config_.prefill_tokens_while_decoding);
    }
    for (auto& owned : running_) {
      Request& r = *owned;
      if (r.cancel || budget == 0) continue;
      const bool decoding = r.prompt_done == r.prompt.size();
      if (decoding != (pass == 0)) continue;
      Sequence& s = *r.sequence;
      const auto first_row = batch_.rows();
      const auto first_position = static_cast<std::uint32_t>(s.tokens.size());
      std::uint32_t n = 1;
      if (decoding) {
        batch_.tokens.push_back(r.next_token);
        batch_.positions.push_back(static_cast<std::int32_t>(first_position));
      } else {
        n = std::min<std::uint32_t>(budget, static_cast<std::uint32_t>(r.prompt.size()) - r.prompt_done);
        for (std::uint32_t i = 0; i < n; ++i) {
          batch_.tokens.push_back(r.prompt[r.prompt_done + i]);
          batch_.positions.push_back(static_cast<std::int32_t>(first_position + i));
        }
      }
      budget -= n;
      batch_.sequences.push_back({&s.blocks, first_row, n});
      const bool wants_logits = decoding || r.prompt_done + n == r.prompt.size();
      if (wants_logits) {
        batch_.output_rows.push_back(first_row + n - 1);
        batch_requests_.push_back(&r);
      }
    }
  }
}

Engine::TokenPick Engine::token_pick() const {
  const auto every_row = [&](auto&& ok) {
    return std::all_of(batch_requests_.begin(), batch_requests_.end(),
                       [&](const Request* r) { return !r->logprobs && ok(*r->sampler); });
  };
  if (!forward_->has_device_argmax()) return TokenPick::host;
  if (every_row([](const SamplerChain& s) { return s.is_plain_greedy(); })) {
    return TokenPick::device_greedy;
  }
  if (forward_->has_device_sampling() &&
      every_row([](const SamplerChain& s) { return s.has_program(); })) {
    return TokenPick::device_program;
  }
  return TokenPick::host;
}

void Engine::step() {
  // Requests cancelled since the last step end before any work is done for them.
  for (auto& owned : running_) {
    if (!owned->admission_error.empty()) {
      finish(*owned, LPX_FINISH_ERROR, owned->admission_error, LPX_ERR_RESOURCE_EXHAUSTED);
    } else if (owned->cancel) {
      finish(*owned, LPX_FINISH_CANCELLED);
    }
  }
  {
    std::lock_guard lock(mutex_);
    std::erase_if(running_, [](const std::unique_ptr<Request>& r) { return r->sequence == nullptr; });
  }
  build_batch();
  if (batch_.rows() == 0) return;
  const TokenPick pick = token_pick();
  try {
    if (pick == TokenPick::host) {
      forward_->run(batch_, logits_.data());
    } else if (pick == TokenPick::device_greedy) {
      forward_->pick_tokens(batch_, nullptr, picked_tokens_.data());
    } else {
      for (std::size_t o = 0; o < batch_requests_.size(); ++o) {
        batch_requests_[o]->sampler->next_program(programs_[o]);
      }
      forward_->pick_tokens(batch_, programs_.data(), picked_tokens_.data());
    }
  } catch (const std::exception& e) {
    // A kernel failed: every request in the batch ends with the error; the cache rows they
    // wrote are discarded with them.
    for (const BatchSequence& bs : batch_.sequences) {
      for (auto& owned : running_) {
        if (owned->sequence != nullptr && &owned->sequence->blocks == bs.blocks) {
          finish(*owned, LPX_FINISH_ERROR, e.what());
        }
      }
    }
    std::lock_guard lock(mutex_);
    std::erase_if(running_, [](const std::unique_ptr<Request>& r) { return r->sequence == nullptr; });
    return;
  }
  // Record what the step computed, then sample where logits came out.
  for (auto& owned : running_) {
    Request& r = *owned;
    for (const BatchSequence& bs : batch_.sequences) {
      if (bs.blocks != &r.sequence->blocks) continue;
      for (std::uint32_t i = 0; i < bs.n_rows; ++i) r.sequence->tokens.push_back(batch_.tokens[bs.first_row + i]);
      if (r.prompt_done < r.prompt.size()) {
        r.prompt_done += bs.n_rows;
        prompt_tokens_computed_.fetch_add(bs.n_rows, std::memory_order_relaxed);
      }
    }
  }
  steps_.fetch_add(1, std::memory_order_relaxed);
  for (std::size_t o = 0; o < batch_requests_.size(); ++o) {
    Request& r = *batch_requests_[o];
    try {
      const bool on_host = pick == TokenPick::host;
      const float* logits = on_host ? logits_.data() + o * h_.n_vocab : nullptr;
      const std::int32_t token = on_host ? r.sampler->sample(logits) : picked_tokens_[o];
      r.sampler->accept(token);
      tokens_generated_.fetch_add(1, std::memory_order_relaxed);
      deliver(r, token, logits);
    } catch (const std::exception& e) {
      finish(r, LPX_FINISH_ERROR, e.what());
    }
  }
  std::lock_guard lock(mutex_);
  std::erase_if(running_, [](const std::unique_ptr<Request>& r) { return r->sequence == nullptr; });
}

void Engine::compute_logprobs(Request& r, std::int32_t token, const float* logits) {
  // log p(i) = l(i) - log(sum_j exp(l(j))), summed from the maximum for range.
  const std::uint32_t n = h_.n_vocab;
  float max = logits[0];
  for (std::uint32_t i = 1; i < n; ++i) max = std::max(max, logits[i]);
  double sum = 0;
  for (std::uint32_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(logits[i] - max));
  const double log_z = static_cast<double>(max) + std::log(sum);
  const auto entry = [&](std::int32_t id) {
    auto piece = parts_.tokenizer->piece(id, true);
    const std::string_view text = piece ? *piece : std::string_view{};
    return lpx_token_logprob{id, static_cast<float>(static_cast<double>(logits[id]) - log_z),
                             text.data(), text.size()};
  };
  r.chosen_logprob = entry(token);
  // The k most likely by insertion into a short sorted list (k <= 20, no allocation).
  const std::size_t k = r.top.size();
  std::size_t filled = 0;
  for (std::uint32_t i = 0; i < n && k > 0; ++i) {
    const float l = logits[i];
    if (filled == k && l <= logits[r.top[k - 1].token]) continue;
    std::size_t at = std::min(filled, k - 1);
    while (at > 0 && logits[r.top[at - 1].token] < l) {
      r.top[at] = r.top[at - 1];
      --at;
    }
    r.top[at].token = static_cast<std::int32_t>(i);
    filled = std::min(filled + 1, k);
  }
  for (lpx_token_logprob& t : r.top) t = entry(t.token);
}

void Engine::deliver(Request& r, std::int32_t token, const float* logits) {
  const auto now = Clock::now();
  if (r.generated == 0) r.first_token = now;
  r.last_token = now;
  const std::uint32_t index = r.generated++;
  if (r.logprobs) compute_logprobs(r, token, logits);
  auto emit = [&](std::string_view text) {
    if (r.on_token == nullptr) return;
    lpx_token_event event{};
    event.struct_size = sizeof(lpx_token_event);
    event.text = text.data();
    event.text_length = text.size();
    event.token = token;
    event.index = index;
    if (r.logprobs) {
      event.chosen = &r.chosen_logprob;
      event.top = r.top.data();
      event.top_count = static_cast<std::uint32_t>(r.top.size());
    }
    if (r.on_token(r.user, &event) != 0) r.cancel = true;
  };
  if (parts_.tokenizer->is_end_of_generation(token) && !r.ignore_end_of_generation) {
    emit({});
    finish(r, LPX_FINISH_EOG);
    return;
  }
  auto piece = r.decoder->push(token);
  if (!piece) {
    finish(r, LPX_FINISH_ERROR, "token " + std::to_string(token) + ": " + piece.error());
    return;
  }
  std::string_view text = *piece;
  if (!utf8::is_well_formed(text)) {  // stray bytes the model chose: shown as U+FFFD
    r.repaired.clear();
    utf8::append_repaired(r.repaired, text);
    text = r.repaired;
  }
  StopMatcher::Result out = r.stops.push(text);
  emit(out.text);
  if (out.stopped) {
    finish(r, LPX_FINISH_STOP);
  } else if (r.max_tokens != 0 && r.generated >= r.max_tokens) {
    finish(r, LPX_FINISH_LENGTH);
  } else if (r.sequence->tokens.size() + 1 > config_.context_size && r.context_end_is_length) {
    finish(r, LPX_FINISH_LENGTH);
  } else if (r.sequence->tokens.size() + 1 > config_.context_size) {
    finish(r, LPX_FINISH_ERROR,
           "the context is full (" + std::to_string(config_.context_size) +
               " tokens); the answer was cut off here",
           LPX_ERR_RESOURCE_EXHAUSTED);
  } else {
    r.next_token = token;
  }
}

void Engine::finish(Request& r, std::int32_t reason, std::string error, lpx_status_code code) {
  if (reason != LPX_FINISH_STOP && reason != LPX_FINISH_ERROR && r.decoder) {
    // Text held back for a possible stop string (or an incomplete character) is still answer.
    // An unfinished character ends as one U+FFFD.
    const std::string tail = utf8::repair(r.decoder->flush());
    StopMatcher::Result out = r.stops.push(tail);
    std::string rest(out.text);
    rest += r.stops.finish();
    if (!rest.empty() && r.on_token != nullptr && reason != LPX_FINISH_CANCELLED) {
      lpx_token_event event{};
      event.struct_size = sizeof(lpx_token_event);
      event.text = rest.data();
      event.text_length = rest.size();
      event.token = -1;
      event.index = r.generated ? r.generated - 1 : 0;
      r.on_token(r.user, &event);
    }
  }
  lpx_request_result result{};
  result.struct_size = sizeof(lpx_request_result);
  result.finish_reason = reason;
  lpx_status* status = nullptr;
  if (reason == LPX_FINISH_ERROR) {
    status = make_status(code, error.c_str());
    result.error = status;
  }
  result.prompt_tokens = static_cast<std::uint32_t>(r.prompt.size());
  result.cached_tokens = r.cached;
  result.completion_tokens = r.generated;
  result.context_size = config_.context_size;
  auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  const auto end = Clock::now();
  result.total_ms = ms(end - r.submitted);
  if (r.generated > 0) {
    result.time_to_first_token_ms = ms(r.first_token - r.submitted);
    const double decode_ms = ms(r.last_token - r.first_token);
    result.decode_tokens_per_second = r.generated > 1 && decode_ms > 0
                                          ? (r.generated - 1) / (decode_ms / 1000.0)
                                          : 0.0;
  }
  r.on_done(r.user, &result);
  if (status != nullptr) status->release(status);
  std::lock_guard lock(mutex_);
  release(r);
  live_.erase(r.id);
  finished_.notify_all();
}

void Engine::release(Request& r) {
  if (r.session != 0) {
    auto it = sessions_.find(r.session);
    if (it != sessions_.end()) {
      Sequence& s = it->second->sequence;
      // Keep what is cached for the next turn, but only the positions the tokens cover.
      cache_->truncate(s.blocks, static_cast<std::uint32_t>(s.tokens.size()));
      it->second->busy = false;
    }
  } else if (r.own_sequence) {
    cache_->release(r.own_sequence->blocks);
  }
  r.sequence = nullptr;
  r.decoder.reset();
}

}  // namespace lpx::core
