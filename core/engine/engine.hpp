// The decode engine: requests in, streamed tokens out, every active request advanced together in
// each step (continuous batching, chunked prefill). One engine thread runs the steps; submit,
// cancel, wait and the session calls are thread-safe. See lpx/engine.h for the contract the
// transports see; this is the C++ side of it.
//
// Three stages, one file each: RequestIntake checks a request and builds what it runs
// (request_intake.hpp), the Scheduler admits requests and plans each step's batch
// (scheduler.hpp), TokenOutput streams tokens and reports results (token_output.hpp). The engine
// owns them, the model's forward pass and the KV cache; it holds the lock, runs the thread and
// moves each step's rows between them (engine.cpp: life and the thread-safe calls;
// engine_step.cpp: the engine thread).
//
// Memory: weights stay memory-mapped in the model file; the KV cache is one paged pool sized in
// tokens (EngineConfig::kv_cache_tokens); a request is admitted when the pool has the blocks for
// its whole prompt + max_tokens (so a running request never runs out of cache), and waits in
// the queue otherwise.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "chat_template/chat_template.hpp"
#include "engine/backend.hpp"
#include "engine/batch.hpp"
#include "engine/kv_cache.hpp"
#include "engine/device_forward.hpp"
#include "engine/draft_model.hpp"
#include "engine/engine_config.hpp"
#include "engine/forward_pass.hpp"
#include "engine/request.hpp"
#include "engine/request_intake.hpp"
#include "engine/scheduler.hpp"
#include "engine/token_output.hpp"
#include "engine/transformer_forward.hpp"
#include "engine/sampler_chain_factory.hpp"
#include "lpx/engine.h"
#include "model/architecture.hpp"
#include "model/hyperparameters.hpp"
#include "model/model_file.hpp"
#include "model/resident_adapter.hpp"
#include "tokenizer/tokenizer.hpp"
#include "util/expected.hpp"

namespace lpx::core {

// Everything the engine runs on. The engine takes ownership.
struct EngineParts {
  std::unique_ptr<ModelFile> file;
  std::unique_ptr<Tokenizer> tokenizer;
  std::optional<ChatTemplate> chat_template;  // the model's, or the pipeline's override
  std::string chat_template_origin;           // "the model" or the override's path, for errors
  std::string chat_template_source;           // its text (lpx_engine_info.chat_template)
  std::unique_ptr<Backend> backend;
  std::unique_ptr<SamplerChainFactory> samplers;
  std::unique_ptr<ModelFile> draft_file;  // speculative decoding's draft model; NULL: none
  // LoRA adapters requests may name (lpx_request.adapter), slots 1, 2, ... in order.
  std::vector<std::unique_ptr<ResidentAdapter>> adapters;
};

class Engine {
 public:
  // Checks the model (architecture, hyperparameters, tensor types the backend supports), sizes
  // the KV cache and starts the engine thread. Logs the memory it set aside.
  static Expected<std::unique_ptr<Engine>> create(EngineParts parts, EngineConfig config);
  ~Engine();  // cancels what is running and joins the engine thread
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Refusals carry their code and the request field at fault (util/status.hpp).
  Expected<std::uint64_t> submit(const lpx_request& request);
  // Several requests that join the queue at once (so the same step admits them, as far as the
  // batch allows): all are queued or, with the first refusal, none. Benchmarks use it to start
  // a batch together.
  Expected<std::vector<std::uint64_t>> submit_together(
      std::span<const lpx_request> requests);
  void cancel(std::uint64_t request_id);
  void wait(std::uint64_t request_id);
  std::uint64_t session_create();
  void session_destroy(std::uint64_t session);
  void info(lpx_engine_info& out) const;
  void stats(lpx_engine_stats& out) const;

  const Tokenizer& tokenizer() const noexcept { return *parts_.tokenizer; }
  const Hyperparameters& hyperparameters() const noexcept { return h_; }
  const EngineConfig& config() const noexcept { return config_; }
  std::size_t kv_cache_bytes() const noexcept { return cache_->bytes(); }
  // The resident LoRA adapters' A and B matrices (f32 copies).
  std::uint64_t adapter_bytes() const noexcept {
    std::uint64_t total = 0;
    for (const auto& adapter : parts_.adapters) total += adapter->bytes();
    return total;
  }

  // Steps queued on the device behind the step before them (EngineConfig::overlap_steps):
  // the steps the device ran without waiting for the host.
  std::uint64_t steps_queued_behind() const noexcept {
    return steps_queued_behind_.load(std::memory_order_relaxed);
  }

  // Prompt tokens for `request` as the engine would run it (for --ids style tools and tests).
  Expected<std::vector<std::int32_t>> prompt_tokens(const lpx_request& request) const;

 private:
  Engine(EngineParts parts, EngineConfig config, Hyperparameters h, TransformerModel model,
         std::unique_ptr<DraftModel> draft_model);
  void loop();
  void step();
  // Speculative decoding: each decoding request's drafts for the next step (ngram_draft).
  void draft_tokens();
  // The draft model's part of draft_tokens(): draft_jobs_ drafted, or their requests ended with
  // the error of a failing draft kernel.
  void draft_with_model();
  // Whether `token` ends `r`'s answer (an end-of-generation token it does not ignore).
  bool ends_generation(const Request& r, std::int32_t token) const;
  // Prefix caching: indexes the blocks `r` has filled (under mutex_).
  void publish(Request& r);
  // Where this step's tokens are picked: on the host from the logits, or on the device (greedy,
  // or every row's sampling program) when no row needs its logits, so only token ids cross.
  enum class TokenPick { host, device_greedy, device_program };
  TokenPick token_pick() const;  // for batch_requests_
  // After a step: the request's decoded row `token` is in its cache.
  static void record_decoded(Request& r, std::int32_t token);
  // After a step: `n` prompt rows of the request, `tokens`, are in its cache.
  void record_prompt_rows(Request& r, const std::int32_t* tokens, std::uint32_t n);
  // After a step: prompt blocks published, blocks out of every window given back.
  void after_step();
  // Each output row's token to its request (batch_requests_; picked_tokens_ or logits_).
  void deliver_picks();
  // Draws each request's next sampling program.
  static void next_programs(const std::vector<Request*>& requests,
                            std::vector<lpx_sampling_program>& programs);
  // Finished requests leave the running list (and any queued step's rows), under mutex_.
  void drop_finished();

  // Queued steps (EngineConfig::overlap_steps; engine_queued_step.cpp). batch_ runs queued
  // when every row is its sequence's only row and an output row, picked on the device; the
  // step after it is queued behind it while it runs when it is the same rows one position
  // on, so the device goes from step to step without waiting for the host.
  bool queues_batch() const;
  bool queue_batch();  // false when it failed (its requests ended with the error)
  // With batch_ queued: queues its successor (next_batch_) behind it when it may follow, then
  // collects batch_.
  void advance_queue();
  bool successor_may_follow() const;
  // Completes batch_: records it, delivers its picks; the successor (when queued) becomes
  // batch_.
  void collect_queued(bool successor);
  void fail_queued(const std::exception& e);  // batch_'s requests end with the error
  // Reports the request's result and releases it (engine thread).
  void finish(Request& request, const Ending& ending);

  EngineParts parts_;
  EngineConfig config_;
  Hyperparameters h_;
  TransformerModel model_;  // the architecture-neutral description all forwards run
  std::string model_name_;
  std::unique_ptr<KvCache> cache_;
  std::unique_ptr<ForwardPass> forward_;
  std::unique_ptr<DraftModel> draft_model_;  // speculative mode "draft"; NULL otherwise
  std::vector<DraftJob> draft_jobs_;         // max_sequences: a step's calls on the draft model
  std::unique_ptr<RequestIntake> intake_;
  std::unique_ptr<Scheduler> scheduler_;  // guarded by mutex_ (see scheduler.hpp)
  std::unique_ptr<TokenOutput> output_;
  Batch batch_;
  std::vector<Request*> batch_requests_;  // per output row of batch_
  std::vector<float> logits_;             // max_sequences x n_vocab
  std::vector<std::int32_t> picked_tokens_;  // max_sequences: tokens picked on the device
  std::vector<lpx_sampling_program> programs_;  // max_sequences: what the device runs to pick
  TokenPick pick_ = TokenPick::host;  // how batch_'s tokens are picked
  bool queued_ = false;  // batch_ is queued on the device, its picks not yet read
  // The step queued behind batch_: its rows (tokens from batch_'s picks), requests (NULL once
  // ended), picks, programs, and per row the output of batch_ its token comes from.
  Batch next_batch_;
  std::vector<Request*> next_requests_;
  std::vector<std::int32_t> next_picks_;
  std::vector<lpx_sampling_program> next_programs_;
  std::vector<std::int32_t> previous_outputs_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;      // the engine thread: work arrived or stop
  std::condition_variable finished_;  // waiters: a request finished
  bool stopping_ = false;
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, bool> live_;  // request id -> true while not finished
  // Counters for stats(); written by the engine thread.
  std::atomic<std::uint64_t> prompt_tokens_computed_{0};
  std::atomic<std::uint64_t> tokens_generated_{0};
  std::atomic<std::uint64_t> draft_tokens_{0};     // drafted and verified
  std::atomic<std::uint64_t> accepted_tokens_{0};  // of those, confirmed by the model
  std::atomic<std::uint64_t> steps_{0};
  std::atomic<std::uint64_t> steps_queued_behind_{0};
  std::thread thread_;
};

}  // namespace lpx::core
