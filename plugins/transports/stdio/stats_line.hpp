// The one-line summary printed after an answer when statistics are on, e.g.
//   [ttft 41 ms · 87.3 tok/s · 52 tokens · context 140/8192 · 80 cached · drafts 31/40 accepted]
// time to first token, decode speed (tokens after the first, per second), tokens generated, the
// context used by the conversation so far (prompt + answer) out of the engine's limit, when
// the engine reused cached KV, how many prompt tokens it did not have to re-read, and with
// speculative decoding, how many of the tokens drafted for the answer the model confirmed.
#pragma once

#include <string>

#include <lpx/cpp/engine.hpp>

namespace lpx::stdio {

std::string stats_line(const GenerationResult& result);

}  // namespace lpx::stdio
