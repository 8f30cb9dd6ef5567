// The jsonl transport's options ([transport] table). See docs/batch.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <lpx/cpp/options.hpp>

namespace lpx::batch {

enum class ProgressMode { kAuto, kBar, kLog, kOff };

struct Shard {
  std::uint32_t index = 0;  // 0-based
  std::uint32_t count = 1;
};

struct BatchOptions {
  std::string input;
  std::vector<std::string> merge;  // run directories to combine instead of running
  std::string run_dir;  // empty: outputs/<UTC time>-<hash of the input>/
  bool resume = false;
  std::optional<Shard> shard;
  std::uint32_t max_in_flight = 0;  // 0: twice the engine's running sequences
  std::chrono::milliseconds item_timeout{600000};
  std::uint32_t max_attempts = 3;
  std::chrono::milliseconds retry_backoff{500};
  std::uint32_t default_max_tokens = 0;  // 0: until the model stops or the context ends
  ProgressMode progress = ProgressMode::kAuto;
  std::chrono::seconds log_interval{5};

  // Throws lpx::Error for a malformed shard ("I/N", 0 <= I < N).
  static BatchOptions read(const Options& options);
};

// "2/8" -> {2, 8}; nullopt when malformed.
std::optional<Shard> parse_shard(const std::string& text);

std::span<const lpx_option_spec> batch_option_schema() noexcept;

}  // namespace lpx::batch
