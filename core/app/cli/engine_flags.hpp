// The flags serve and batch share: where the model runs (--device, --backend), how much the
// engine holds (--context, --max-sequences), whether it speculates (--speculative,
// --draft-model), merges adapters and quantizes as it loads (--lora, --quantize), and which
// adapters requests may name (--adapter). Arguments: a
// struct with the fields device, backend, context_size, max_sequences, speculative
// (SpeculativeFlags), loras, adapters and quantize.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/device_choice.hpp"
#include "quantize/quantization_plan.hpp"
#include "util/expected.hpp"

namespace lpx::cli {

// --speculative MODE and --draft-model FILE: [speculative] mode and draft_model (docs/engine.md).
struct SpeculativeFlags {
  std::string mode;         // off | ngram | draft; empty when not given
  std::string draft_model;  // empty when not given

  // The mode they ask for: a draft model alone means "draft"; nothing means "off". Contradictions
  // are errors, not guesses.
  core::Expected<std::string> resolved_mode() const {
    if (mode.empty()) return draft_model.empty() ? "off" : "draft";
    if (mode == "draft" && draft_model.empty()) {
      return core::invalid_argument(std::string("--speculative draft needs --draft-model FILE"));
    }
    if (mode != "draft" && !draft_model.empty()) {
      return core::invalid_argument("--draft-model is used with --speculative draft, not " + mode);
    }
    return mode;
  }
};

inline void add_speculative_flags(CLI::App& command, SpeculativeFlags& flags) {
  command.add_option("--speculative", flags.mode,
                     "Speculative decoding: off, ngram (drafts from the text itself) or draft (from "
                     "--draft-model); default off, or draft with --draft-model")
      ->check(CLI::IsMember({"off", "ngram", "draft"}));
  command.add_option("--draft-model", flags.draft_model,
                     "A smaller model with the same vocabulary that drafts tokens for the model to verify");
}

// --quantize TYPE: [model] quantize (the F32/F16/BF16 weights quantized as the model loads).
inline void add_quantize_flag(CLI::App& command, std::string& quantize) {
  command.add_option("--quantize", quantize,
                     "Quantize the weights as the model loads, as `quantize --type` would: " +
                         core::quant_mix_names())
      ->check(CLI::IsMember(core::quant_mix_choices(), CLI::ignore_case));
}

// --lora FILE[@SCALE], repeatable: [model] lora (adapters merged as the model loads).
inline void add_lora_flag(CLI::App& command, std::vector<std::string>& loras) {
  command.add_option("--lora", loras,
                     "LoRA adapter (llama.cpp GGUF) merged into the weights as the model loads: FILE or "
                     "FILE@SCALE; repeatable");
}

// --adapter NAME=FILE[@SCALE], repeatable: [model] adapters (kept beside the weights, applied to
// the requests whose model is "MODEL:NAME").
inline void add_adapter_flag(CLI::App& command, std::vector<std::string>& adapters) {
  command.add_option("--adapter", adapters,
                     "LoRA adapter (llama.cpp GGUF) kept beside the weights of the first --model for the "
                     "requests that name it (\"model\": \"MODEL:NAME\"): NAME=FILE or NAME=FILE@SCALE; "
                     "repeatable");
}

template <class Arguments>
void add_engine_flags(CLI::App& command, Arguments& a) {
  command.add_option("--device", a.device, "cpu, cuda, cuda:N or auto")
      ->check(core::check_device)
      ->capture_default_str();
  command.add_option("--backend", a.backend, "Backend plugin by name; overrides --device");
  command.add_option("--context", a.context_size, "Positions per sequence")
      ->check(CLI::Range(16u, 1u << 20))
      ->capture_default_str();
  command.add_option("--max-sequences", a.max_sequences, "Sequences decoded together")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  add_speculative_flags(command, a.speculative);
  add_quantize_flag(command, a.quantize);
  add_lora_flag(command, a.loras);
  add_adapter_flag(command, a.adapters);
}

}  // namespace lpx::cli
