// An error answered to the client: HTTP status plus OpenAI's error object
//   {"error": {"message", "type", "param", "code"}}.
// Handlers throw ApiError; the connection turns it into the response. Messages are fixed texts
// or engine messages, never bytes the client sent.
#pragma once

#include <stdexcept>
#include <string>

#include <lpx/cpp/status.hpp>

namespace lpx::openai {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string type, const std::string& message, std::string param = {})
      : std::runtime_error(message), status_(status), type_(std::move(type)), param_(std::move(param)) {}

  int status() const noexcept { return status_; }
  // Seconds for a Retry-After header (429, 503); 0 = none.
  int retry_after() const noexcept { return retry_after_; }
  ApiError& with_retry_after(int seconds) noexcept {
    retry_after_ = seconds;
    return *this;
  }
  // Milliseconds for a retry-after-ms header (0 = none); Retry-After gets them rounded up.
  int retry_after_ms() const noexcept { return retry_after_ms_; }
  ApiError& with_retry_after_ms(int ms) noexcept {
    retry_after_ms_ = ms;
    retry_after_ = (ms + 999) / 1000;
    return *this;
  }
  const std::string& type() const noexcept { return type_; }
  const std::string& param() const noexcept { return param_; }
  // OpenAI's machine-readable error code ("context_length_exceeded"); empty: null.
  const std::string& code() const noexcept { return code_; }
  ApiError& with_code(std::string code) {
    code_ = std::move(code);
    return *this;
  }
  // The JSON object, serialized.
  std::string body() const;

 private:
  int status_;
  std::string type_;
  std::string param_;
  std::string code_;
  int retry_after_ = 0;
  int retry_after_ms_ = 0;
};

inline ApiError bad_request(const std::string& message, std::string param = {}) {
  return ApiError(400, "invalid_request_error", message, std::move(param));
}

// The answer to the engine refusing a request, from the refusal's status code and field alone
// (never its message): invalid argument or unsupported 400; a context too small for the prompt
// or max_tokens 400 with code context_length_exceeded (as OpenAI answers it); any other limit
// reached (a request larger than the whole KV cache, no field named) 413; unknown session 404; busy session 409; shutting down or out of
// memory 503 (retry); anything else 500. `input_field` names the request's input ("prompt" or
// "messages") when the engine named none.
ApiError engine_refusal(const lpx::Error& refusal, const std::string& input_field);

}  // namespace lpx::openai
