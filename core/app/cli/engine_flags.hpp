// The flags serve and batch share: where the model runs (--device, --backend), how much the
// engine holds (--context, --max-sequences) and whether it speculates (--speculative).
// Arguments: a struct with the fields device, backend, context_size, max_sequences and
// speculative.
#pragma once

#include <CLI/CLI.hpp>

#include "engine/device_choice.hpp"

namespace lpx::cli {

// --speculative MODE: [speculative] mode (docs/engine.md).
inline void add_speculative_flag(CLI::App& command, std::string& mode) {
  command.add_option("--speculative", mode, "Speculative decoding: off, or ngram (drafts from the text itself)")
      ->check(CLI::IsMember({"off", "ngram"}))
      ->capture_default_str();
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
  add_speculative_flag(command, a.speculative);
}

}  // namespace lpx::cli
