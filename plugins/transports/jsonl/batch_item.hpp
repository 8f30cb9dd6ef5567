// One input line of a batch job, read: its key (the id every output line is matched by), the
// engine request it asks for, or the reason it cannot run (a deterministic failure).
//
// Accepted lines (docs/batch.md):
//   {"id": "a1", "prompt": "…", "max_tokens": 64, …}         plain, completion of a prompt
//   {"id": "a2", "messages": [{"role": "user", …}], …}        plain, chat
//   {"custom_id": "r1", "method": "POST", "url": "/v1/chat/completions", "body": {…}}
//                                                              OpenAI Batch API request
// A plain line without "id" gets its 1-based line number ("17") as id.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "generation_request.hpp"

namespace lpx::batch {

enum class LineFormat { kPlain, kOpenAiBatch };

struct BatchItem {
  std::uint64_t line = 0;          // 1-based line number in the input
  std::string key;                 // the id; "line:N" when the line has no readable id
  bool has_id = false;             // key is a real id (else the line could not be read)
  LineFormat format = LineFormat::kPlain;
  std::string url;                 // OpenAI lines: "/v1/chat/completions" or "/v1/completions"
  openai::GenerationRequest request;
  std::string error;               // non-empty: fails without running, with this reason
};

struct ItemDefaults {
  std::uint32_t max_tokens = 0;  // for lines that set none
  openai::RequestLimits limits;
};

// Never throws: whatever is wrong with the line becomes `error`.
BatchItem read_batch_item(std::uint64_t line_number, const std::string& line,
                          const ItemDefaults& defaults);

}  // namespace lpx::batch
