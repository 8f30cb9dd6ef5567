// Drafts for speculative decoding from the sequence's own text (prompt lookup): where the last
// few tokens appeared before, the tokens that followed them then are guessed to follow again.
// Rewriting, extraction and code edits repeat long runs of the prompt, so guesses are often
// right there, and a right guess is a token the model confirms in the same step as the one
// before it (docs/engine.md).
#pragma once

#include <cstdint>
#include <vector>

namespace lpx::core {

// Fills `draft` (cleared first) with up to `max_draft` tokens: those that followed the latest
// earlier occurrence of the last `ngram` tokens of `context` + `next`; none when they have not
// occurred before. Only a match of the full length counts: shorter ones guess poorly (with
// matches down to one token, 82 % of the drafts of a copying answer were confirmed, with four
// tokens 100 %, docs/perf/speculative.md), and a refused draft is a wasted row of the step.
// No allocation when `draft` has the capacity.
void ngram_draft(const std::vector<std::int32_t>& context, std::int32_t next, std::uint32_t ngram,
                 std::uint32_t max_draft, std::vector<std::int32_t>& draft);

}  // namespace lpx::core
