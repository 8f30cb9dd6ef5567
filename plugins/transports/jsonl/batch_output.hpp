// The lines a batch job writes. Plain inputs get plain lines; OpenAI Batch API inputs get OpenAI
// batch output lines, so existing tooling reads them:
//   results.jsonl   {"id", "line", "text", "finish_reason", "usage", "timings", "attempts"}
//                   {"id": "batch_req_…", "custom_id", "response": {"status_code": 200,
//                    "request_id", "body": <chat.completion | text_completion>}, "error": null}
//   failures.jsonl  {"id"?, "line", "error", "attempts"}
//                   {"id": "batch_req_…", "custom_id", "response": null,
//                    "error": {"code", "message"}, "line", "attempts"}
#pragma once

#include <string>

#include "batch_item.hpp"
#include "response_format.hpp"

namespace lpx::batch {

std::string result_line(const BatchItem& item, const openai::CollectedChoice& choice,
                        const std::string& model, std::uint32_t attempts);

// `code` is a short machine-readable reason: "invalid_request", "context_length_exceeded",
// "timeout", "engine_error"; `param`, when set, the request field at fault.
std::string failure_line(const BatchItem& item, const std::string& code, const std::string& error,
                         std::uint32_t attempts, const std::string& param = {});

}  // namespace lpx::batch
