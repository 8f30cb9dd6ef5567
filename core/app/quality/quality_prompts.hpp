// The fixed prompts of `lpx-pipeline quality`: short questions in several languages and scripts,
// and one for code, each with a short, natural answer, so that the faults of a broken model
// (empty or garbled text, leaked special tokens, answers cut off or looping) show within a
// hundred tokens.
#pragma once

#include <string_view>
#include <vector>

namespace lpx::core::quality {

struct QualityPrompt {
  std::string_view language;  // "en", "fr", ..., "code"
  std::string_view text;
};

const std::vector<QualityPrompt>& quality_prompts();

}  // namespace lpx::core::quality
