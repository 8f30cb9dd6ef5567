// The shared OpenAI request and response code (plugins/common/openai) under the names the http
// transport uses.
#pragma once

#include "api_error.hpp"
#include "generation_output.hpp"
#include "generation_request.hpp"
#include "json_fields.hpp"
#include "response_format.hpp"
#include "lpx/cpp/utf8.hpp"

namespace lpx::http {

using openai::ApiError;
using openai::bad_request;
using openai::Endpoint;
using openai::GenerationRequest;
using openai::RequestLimits;
using openai::PromptInput;
using openai::parse_generation_request;
using openai::parse_json_object;
using openai::JsonFields;
using openai::field_error;
using openai::ResponseContext;
using openai::make_response_context;
using openai::finish_reason_name;
using openai::logprobs_json;
using openai::usage_json;
using openai::chunk_json;
using openai::role_chunk_json;
using openai::usage_chunk_json;
using openai::CollectedChoice;
using openai::full_response_json;
using openai::TokenLogprob;
using openai::TokenOutput;
using openai::ChoiceOutcome;
using openai::token_output;
using openai::choice_outcome;

// What a request gets once the server has begun to stop: 503, come back in 5 s (another replica
// may answer it then).
inline ApiError server_shutting_down() {
  return ApiError(503, "server_error", "the server is shutting down").with_retry_after(5);
}

}  // namespace lpx::http
