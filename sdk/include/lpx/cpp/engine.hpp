// C++ conveniences over lpx/engine.h for transports: an Engine handle with a blocking generate(),
// RAII sessions, and owned copies of results.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "lpx/cpp/status.hpp"
#include "lpx/engine.h"
#include "lpx/kinds/transport.h"

namespace lpx {

// How a request ended, copied out of lpx_request_result.
struct GenerationResult {
  lpx_finish_reason finish_reason = LPX_FINISH_ERROR;
  lpx_status_code error_code = LPX_OK;  // FINISH_ERROR only
  std::string error;                    // FINISH_ERROR only
  std::uint32_t prompt_tokens = 0;
  std::uint32_t cached_tokens = 0;
  std::uint32_t completion_tokens = 0;
  std::uint32_t context_size = 0;
  double time_to_first_token_ms = 0;
  double decode_tokens_per_second = 0;
  double total_ms = 0;
  std::uint32_t draft_tokens = 0;           // speculative decoding: drafted and verified
  std::uint32_t accepted_draft_tokens = 0;  // of those, confirmed by the model
  double queue_ms = 0;                      // waiting for a sequence slot (ABI 2.4)
};

class EngineHandle {
 public:
  // The engine of a run context; throws lpx::Error when the pipeline has none (no [model]).
  explicit EngineHandle(const lpx_run_context& context) {
    if (context.struct_size < offsetof(lpx_run_context, show_stats) + sizeof(int32_t) ||
        context.engine == nullptr || context.engine_api == nullptr) {
      throw Error(LPX_ERR_UNSUPPORTED, "this pipeline has no model: add a [model] table");
    }
    engine_ = context.engine;
    api_ = context.engine_api;
  }

  // An engine the host handed over another way (a model's lease, lpx/cpp/models.hpp).
  EngineHandle(lpx_engine* engine, const lpx_engine_api* api) : engine_(engine), api_(api) {
    if (engine_ == nullptr || api_ == nullptr) throw Error(LPX_ERR_INVALID_ARGUMENT, "no engine");
  }

  lpx_engine_info info() const {
    lpx_engine_info out{};
    out.struct_size = sizeof(out);
    api_->info(engine_, &out);
    return out;
  }

  std::uint64_t create_session() const {
    std::uint64_t id = 0;
    check(api_->session_create(engine_, &id));
    return id;
  }
  void destroy_session(std::uint64_t session) const { api_->session_destroy(engine_, session); }
  void cancel(std::uint64_t request_id) const { api_->cancel(engine_, request_id); }
  // Queues `request` as given (callbacks included) and returns its id; throws lpx::Error when
  // the engine refuses it.
  std::uint64_t submit(const lpx_request& request) const {
    std::uint64_t id = 0;
    check(api_->submit(engine_, &request, &id));
    return id;
  }

  // Since 1.3 (the host is at least as new as this header's plugin, so these entries exist).
  lpx_engine_stats stats() const {
    lpx_engine_stats out{};
    out.struct_size = sizeof(out);
    api_->stats(engine_, &out);
    return out;
  }
  // Throws lpx::Error (LPX_ERR_INVALID_ARGUMENT) on invalid UTF-8.
  std::vector<std::int32_t> tokenize(std::string_view text, std::uint32_t flags) const {
    std::vector<std::int32_t> tokens(text.size() / 2 + 8);
    for (;;) {
      std::size_t count = 0;
      check(api_->tokenize(engine_, text.data(), text.size(), flags, tokens.data(), tokens.size(),
                           &count));
      const bool fits = count <= tokens.size();
      tokens.resize(count);
      if (fits) return tokens;
    }
  }
  // Throws lpx::Error naming an id outside the vocabulary.
  std::string detokenize(const std::vector<std::int32_t>& tokens, std::uint32_t flags) const {
    std::string text(tokens.size() * 4 + 16, '\0');
    for (;;) {
      std::size_t length = 0;
      check(api_->detokenize(engine_, tokens.data(), tokens.size(), flags, text.data(), text.size(),
                             &length));
      const bool fits = length <= text.size();
      text.resize(length);
      if (fits) return text;
    }
  }

  // Runs `request` to the end, calling on_text(text) for each non-empty piece of output;
  // on_text returns false to cancel (an exception it throws also cancels, and is rethrown
  // here once the request has ended). `request`'s callbacks and user pointer are replaced.
  // `on_submitted(id)`, if given, learns the request id (e.g. to cancel it from another thread).
  // Throws lpx::Error when the engine refuses the request.
  GenerationResult generate(lpx_request request,
                            const std::function<bool(std::string_view)>& on_text,
                            const std::function<void(std::uint64_t)>& on_submitted = {}) const {
    struct Context {
      const std::function<bool(std::string_view)>* on_text;
      GenerationResult result;
      std::exception_ptr failure;
    } context{&on_text, {}, {}};
    request.struct_size = sizeof(lpx_request);
    request.user = &context;
    request.on_token = [](void* user, const lpx_token_event* event) -> std::int32_t {
      auto& c = *static_cast<Context*>(user);
      if (event->text_length == 0 || c.failure) return c.failure ? 1 : 0;
      try {  // nothing may unwind into the engine's C callback
        return (*c.on_text)(std::string_view(event->text, event->text_length)) ? 0 : 1;
      } catch (...) {
        c.failure = std::current_exception();
        return 1;
      }
    };
    request.on_done = [](void* user, const lpx_request_result* r) {
      auto& out = static_cast<Context*>(user)->result;
      out.finish_reason = static_cast<lpx_finish_reason>(r->finish_reason);
      if (r->error != nullptr) {
        out.error_code = static_cast<lpx_status_code>(r->error->code);
        out.error = r->error->message ? r->error->message : "";
      }
      out.prompt_tokens = r->prompt_tokens;
      out.cached_tokens = r->cached_tokens;
      out.completion_tokens = r->completion_tokens;
      out.context_size = r->context_size;
      out.time_to_first_token_ms = r->time_to_first_token_ms;
      out.decode_tokens_per_second = r->decode_tokens_per_second;
      out.total_ms = r->total_ms;
      if (r->struct_size >= offsetof(lpx_request_result, accepted_draft_tokens) + sizeof(std::uint32_t)) {
        out.draft_tokens = r->draft_tokens;
        out.accepted_draft_tokens = r->accepted_draft_tokens;
      }
      if (r->struct_size >= offsetof(lpx_request_result, queue_ms) + sizeof(double)) {
        out.queue_ms = r->queue_ms;
      }
    };
    std::uint64_t id = 0;
    check(api_->submit(engine_, &request, &id));
    if (on_submitted) on_submitted(id);
    api_->wait(engine_, id);
    if (context.failure) std::rethrow_exception(context.failure);
    return context.result;
  }

 private:
  // The engine's refusal as lpx::Error, with its code and field.
  static void check(lpx_status* status) { throw_if_error(status); }

  lpx_engine* engine_ = nullptr;
  const lpx_engine_api* api_ = nullptr;
};

}  // namespace lpx
