// The engine's second stage: which requests run, and what each step computes. Requests wait in
// arrival order and are admitted while a sequence slot is free and the KV cache can reserve
// their whole prompt + max_tokens (so a running request never runs out of cache; a session's
// request reuses the longest cached prefix that the window, where every layer has one, left
// whole). Each step's batch puts every decoding sequence
// first, one row each (they are latency-bound), then fills the rest with prefill chunks, capped
// at prefill_tokens_while_decoding while anything decodes.
//
// Threading: not thread-safe. The engine calls it with its mutex held, except plan() and
// running(), which only the engine thread calls, without the mutex: the running list changes
// only on the engine thread (in admit_waiting and drop_finished, under the mutex), so other
// threads that read it under the mutex (cancel, stats) never race with a change.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "engine/batch.hpp"
#include "engine/engine_config.hpp"
#include "engine/kv_cache.hpp"
#include "engine/request.hpp"

namespace lpx::core {

class Scheduler {
 public:
  // `cache` and `config` must outlive the scheduler.
  Scheduler(KvCache& cache, const EngineConfig& config);

  void enqueue(std::unique_ptr<Request> request);
  // Waiting requests admitted in order while they fit; cancelled ones move to the running list
  // unadmitted, to be finished by the next step. When nothing runs and the first waiting request
  // still does not fit, idle sessions' cached prefixes are dropped; if it fits no better then,
  // it can never fit and carries an admission error.
  void admit_waiting();
  // Every request whose id is `request_id`, or that belongs to `session`, or all: cancelled.
  void cancel(std::uint64_t request_id);
  void cancel_session(std::uint64_t session);
  void cancel_all();

  // Gives back a finished request's cache (its session keeps the positions its tokens cover, and
  // is free for its next request) and marks it finished (sequence NULL); drop_finished() then
  // removes it from the running list.
  void release(Request& request);
  void drop_finished();
  // After a step computed rows of `request`: where every layer is windowed
  // (EngineConfig::kv_window), its sequence's blocks that the next rows cannot reach go back to
  // the pool.
  void drop_out_of_window(Request& request);
  // After a step computed rows of `request`: its blocks they filled are indexed for prefix
  // caching (when EngineConfig::prefix_cache).
  void publish(Request& request);

  Session* session(std::uint64_t id);  // NULL when unknown
  void add_session(std::uint64_t id);
  void remove_session(std::uint64_t id);  // its cache released; the caller made sure it is idle

  bool has_work() const noexcept { return !waiting_.empty() || !running_.empty(); }
  // The first waiting request is the one the last admit_waiting() could not admit (no free
  // slot or not enough cache): none can be admitted before a running request ends.
  bool admission_blocked() const noexcept {
    return !waiting_.empty() && waiting_.front().get() == blocked_;
  }
  bool nothing_running() const noexcept { return running_.empty(); }
  std::uint32_t waiting_count() const noexcept;
  std::uint32_t running_count() const noexcept;  // admitted and not finished

  // Engine thread: the next step's rows into `batch` (cleared first), and per output row of
  // the batch the request it belongs to.
  void plan(Batch& batch, std::vector<Request*>& output_requests) const;
  std::vector<std::unique_ptr<Request>>& running() noexcept { return running_; }

 private:
  bool admit(Request& request);
  void evict_idle_sessions();
  // `s` (holding no tokens) is to be computed with `adapter`: its prefix chain starts there.
  static void use_adapter(Sequence& s, const ResidentAdapter* adapter);

  KvCache& cache_;
  const EngineConfig& config_;
  std::deque<std::unique_ptr<Request>> waiting_;
  const Request* blocked_ = nullptr;  // see admission_blocked()
  std::vector<std::unique_ptr<Request>> running_;
  std::map<std::uint64_t, std::unique_ptr<Session>> sessions_;
};

}  // namespace lpx::core
