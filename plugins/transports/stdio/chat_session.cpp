#include "chat_session.hpp"

#include <utility>

namespace lpx::stdio {
namespace {

bool completed(lpx_finish_reason reason) {
  return reason == LPX_FINISH_EOG || reason == LPX_FINISH_LENGTH || reason == LPX_FINISH_STOP;
}

}  // namespace

ChatSession::ChatSession(const EngineHandle& engine, RequestCanceller& canceller,
                         std::string system_prompt, std::uint32_t max_tokens)
    : engine_(engine), canceller_(canceller), max_tokens_(max_tokens) {
  if (!system_prompt.empty()) prefix_.push_back({"system", std::move(system_prompt)});
  session_ = engine_.create_session();
}

ChatSession::~ChatSession() { engine_.destroy_session(session_); }

void ChatSession::reset() {
  turns_.clear();
  engine_.destroy_session(session_);
  session_ = 0;
  session_ = engine_.create_session();
}

GenerationResult ChatSession::ask(const std::string& user_text,
                                  const std::function<bool(std::string_view)>& on_text) {
  turns_.push_back({"user", user_text});
  std::vector<lpx_chat_message> messages;
  messages.reserve(prefix_.size() + turns_.size());
  for (const auto* list : {&prefix_, &turns_}) {
    for (const Message& m : *list) messages.push_back({m.role.c_str(), m.content.c_str()});
  }

  lpx_request request{};
  request.messages = messages.data();
  request.message_count = messages.size();
  request.max_tokens = max_tokens_;
  request.session = session_;

  std::string answer;
  // Runs on the engine thread: nothing may escape it.
  auto collect = [&](std::string_view piece) noexcept {
    if (canceller_.stopped()) return false;
    try {
      answer.append(piece);
    } catch (...) {
      return false;
    }
    return on_text(piece);
  };
  GenerationResult result;
  try {
    result =
        engine_.generate(request, collect, [this](std::uint64_t id) { canceller_.started(id); });
  } catch (...) {
    canceller_.finished();
    turns_.pop_back();
    throw;
  }
  canceller_.finished();
  if (completed(result.finish_reason)) {
    turns_.push_back({"assistant", std::move(answer)});
  } else {
    turns_.pop_back();
  }
  return result;
}

}  // namespace lpx::stdio
