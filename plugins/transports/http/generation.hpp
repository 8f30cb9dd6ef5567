// One client request's work in the engine: its choices (n x prompts) are engine requests that
// run together in the continuous batch. Engine callbacks arrive on the engine thread; Generation
// copies what they carry and posts it, in order, to the exchange's executor, where the sink
// turns it into JSON. It also owns the request's deadline and records token timings.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <lpx/cpp/engine.hpp>

#include "openai_names.hpp"
#include "metrics.hpp"
#include "model_routes.hpp"

namespace lpx::http {

// Receives a generation's output on the exchange's executor, per choice in order.
class GenerationSink {
 public:
  virtual ~GenerationSink() = default;
  virtual void on_token(std::uint32_t choice, TokenOutput token) = 0;
  virtual void on_choice_done(std::uint32_t choice, const ChoiceOutcome& outcome) = 0;
  virtual void on_all_done() = 0;
};

class ActiveGenerations;

class Generation : public std::enable_shared_from_this<Generation> {
 public:
  // `model` stays held (its engine loaded) until every choice has ended.
  Generation(std::shared_ptr<const RoutedModel> model, boost::asio::any_io_executor executor,
             std::shared_ptr<GenerationSink> sink, ActiveGenerations& active);
  ~Generation();

  // Submits every choice. Throws ApiError (400, the engine's reason) when the engine refuses
  // one; choices already submitted are then cancelled.
  void start(GenerationRequest request, std::chrono::seconds deadline);
  // Any thread. Every choice ends (LPX_FINISH_CANCELLED) at the engine's next step.
  void cancel() noexcept;

 private:
  struct Choice {
    Generation* owner = nullptr;
    std::uint32_t index = 0;
    std::uint64_t engine_id = 0;
    std::chrono::steady_clock::time_point last_token{};
  };
  static std::int32_t on_engine_token(void* user, const lpx_token_event* event);
  static void on_engine_done(void* user, const lpx_request_result* result);
  void choice_done_here(std::uint32_t choice, ChoiceOutcome outcome);

  std::shared_ptr<const RoutedModel> model_;
  const EngineHandle& engine_;  // model_'s
  ModelMetrics& metrics_;       // model_'s
  boost::asio::any_io_executor executor_;
  std::shared_ptr<GenerationSink> sink_;
  ActiveGenerations& active_;
  GenerationRequest request_;
  std::vector<Choice> choices_;
  boost::asio::steady_timer deadline_;
  std::atomic<bool> timed_out_{false};
  std::mutex ids_mutex_;  // engine ids, for cancel from other threads
  std::uint32_t remaining_ = 0;  // choices not done (executor only)
  bool abandoned_ = false;       // start failed: output goes nowhere (executor only)
  std::shared_ptr<Generation> self_;  // alive until every engine callback has been handled
};

// The generations in flight, for 429 decisions and for draining at shutdown. Thread-safe.
class ActiveGenerations {
 public:
  void add(Generation* g);
  void remove(Generation* g);
  std::size_t count() const;
  void cancel_all();

 private:
  mutable std::mutex mutex_;
  std::set<Generation*> items_;
};

}  // namespace lpx::http
