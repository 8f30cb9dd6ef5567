// The flags serve and batch share: where the model runs (--device, --backend) and how much the
// engine holds (--context, --max-sequences). Arguments: a struct with the fields device,
// backend, context_size and max_sequences.
#pragma once

#include <CLI/CLI.hpp>

#include "engine/device_choice.hpp"

namespace lpx::cli {

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
}

}  // namespace lpx::cli
