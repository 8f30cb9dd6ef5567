// ChatSession: one conversation with the model. It keeps the messages so far (the optional
// system prompt, then user and assistant turns) and an engine session, so each new turn reuses
// the KV cache of the conversation's common prefix instead of re-reading the whole history.
//
// Used from run()'s thread only; the engine session lives as long as the object (or until reset).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <lpx/cpp/engine.hpp>

#include "request_canceller.hpp"

namespace lpx::stdio {

class ChatSession {
 public:
  // Throws lpx::Error when the engine cannot create a session.
  ChatSession(const EngineHandle& engine, RequestCanceller& canceller, std::string system_prompt,
              std::uint32_t max_tokens);
  ~ChatSession();
  ChatSession(const ChatSession&) = delete;
  ChatSession& operator=(const ChatSession&) = delete;

  // Asks `user_text` as the next user turn and streams the answer to `on_text` (which returns
  // false to stop; it runs on the engine thread and must not throw). When the answer is complete
  // (end of generation, max_tokens or a stop string) the turn and the answer join the
  // conversation; when it failed or was cancelled the conversation is left as it was.
  // Throws lpx::Error when the engine refuses the request (e.g. a prompt longer than the context).
  GenerationResult ask(const std::string& user_text,
                       const std::function<bool(std::string_view)>& on_text);

  // Forgets the conversation: a fresh engine session and no turns (the system prompt stays).
  void reset();

 private:
  struct Message {
    std::string role;
    std::string content;
  };

  const EngineHandle& engine_;
  RequestCanceller& canceller_;
  std::uint32_t max_tokens_;
  std::vector<Message> prefix_;  // the system message, when there is one
  std::vector<Message> turns_;
  std::uint64_t session_ = 0;
};

}  // namespace lpx::stdio
