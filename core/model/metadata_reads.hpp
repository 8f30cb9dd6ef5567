// Checked reads of model metadata: a value is present and sane, or absent and defaulted, or
// the error names the key and what is wrong with it ("metadata 'gemma3.block_count' is 0,
// outside 1..1048576").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/model_file.hpp"
#include "util/expected.hpp"

namespace lpx::core {

// A count in 1..2^20 (dimensions, layers, window sizes).
Expected<std::uint32_t> read_count(const ModelFile& file, const std::string& key,
                                   std::optional<std::uint32_t> fallback = std::nullopt);
// A finite number > 0.
Expected<double> read_positive(const ModelFile& file, const std::string& key,
                               std::optional<double> fallback = std::nullopt);
// A finite number >= 0 (a soft cap or scale where 0 means none).
Expected<double> read_non_negative(const ModelFile& file, const std::string& key, double fallback);
Expected<bool> read_flag(const ModelFile& file, const std::string& key, bool fallback);

}  // namespace lpx::core
