// The two ways a generation's output reaches the client: collected into one response, or
// streamed as events (SSE or WebSocket frames, whichever the exchange speaks).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "exchange.hpp"
#include "generation.hpp"
#include "openai_names.hpp"

namespace lpx::http {

// The error a choice's outcome stands for, if it is not a normal finish: timeout → 504,
// cancelled (shutdown) → 503, engine error → 500.
std::optional<ApiError> outcome_error(const ChoiceOutcome& outcome);

class CollectingSink final : public GenerationSink {
 public:
  CollectingSink(std::shared_ptr<Exchange> exchange, ResponseContext context, std::uint32_t choices);
  void on_token(std::uint32_t choice, TokenOutput token) override;
  void on_choice_done(std::uint32_t choice, const ChoiceOutcome& outcome) override;
  void on_all_done() override;

 private:
  std::shared_ptr<Exchange> exchange_;
  std::shared_ptr<AccessEntry> access_;  // held until the generation ends
  ResponseContext context_;
  std::vector<CollectedChoice> choices_;
};

class StreamingSink final : public GenerationSink {
 public:
  StreamingSink(std::shared_ptr<Exchange> exchange, ResponseContext context, std::uint32_t choices,
                bool include_usage);
  // Begins the event stream (headers, and the chat role chunks), once the engine took the request.
  void begin();
  void on_token(std::uint32_t choice, TokenOutput token) override;
  void on_choice_done(std::uint32_t choice, const ChoiceOutcome& outcome) override;
  void on_all_done() override;

 private:
  void send(const boost::json::object& event);

  void send_text(std::uint32_t choice, const std::string& text);

  struct Choice {
    std::vector<TokenOutput> pending_logprobs;  // tokens whose text has not been sent yet
    std::size_t text_sent = 0;                   // bytes, for completions' text_offset
    // With tools: the answer so far, of which text_sent bytes went out as content; the rest
    // may be a call, sent as tool_calls once the answer is whole.
    std::string answer;
  };
  std::shared_ptr<Exchange> exchange_;
  std::shared_ptr<AccessEntry> access_;  // held until the generation ends
  ResponseContext context_;
  bool include_usage_;
  std::vector<Choice> choices_;
  std::vector<ChoiceOutcome> outcomes_;
  std::optional<ApiError> error_;
};

}  // namespace lpx::http
