#include "model/metadata_reads.hpp"

#include <cmath>

namespace lpx::core {
namespace {

constexpr std::uint64_t kMaxDimension = 1u << 20;  // larger than any real model by far

}  // namespace

// A positive 32-bit count under `key`, or the default when absent and a default is given.
Expected<std::uint32_t> read_count(const ModelFile& file, const std::string& key,
                                   std::optional<std::uint32_t> fallback) {
  if (!file.has(key)) {
    if (fallback) return *fallback;
    return invalid_argument("missing metadata '" + key + "'");
  }
  auto value = file.get_uint(key);
  if (!value) return unexpected(value.error());
  if (*value == 0 || *value > kMaxDimension) {
    return invalid_argument("metadata '" + key + "' is " + std::to_string(*value) +
                      ", outside 1.." + std::to_string(kMaxDimension));
  }
  return static_cast<std::uint32_t>(*value);
}

Expected<double> read_positive(const ModelFile& file, const std::string& key,
                               std::optional<double> fallback) {
  if (!file.has(key)) {
    if (fallback) return *fallback;
    return invalid_argument("missing metadata '" + key + "'");
  }
  auto value = file.get_float(key);
  if (!value) return unexpected(value.error());
  if (!std::isfinite(*value) || *value <= 0) {
    return invalid_argument("metadata '" + key + "' is " + std::to_string(*value) +
                      ", not a positive number");
  }
  return *value;
}

Expected<double> read_non_negative(const ModelFile& file, const std::string& key, double fallback) {
  if (!file.has(key)) return fallback;
  auto value = file.get_float(key);
  if (!value) return unexpected(value.error());
  if (!std::isfinite(*value) || *value < 0) {
    return invalid_argument("metadata '" + key + "' is " + std::to_string(*value) +
                            ", not a number >= 0");
  }
  return *value;
}

Expected<bool> read_flag(const ModelFile& file, const std::string& key, bool fallback) {
  if (!file.has(key)) return fallback;
  return file.get_bool(key);
}

}  // namespace lpx::core
