#include "model/rope_scaling.hpp"

#include <cmath>
#include <numbers>
#include <string>

namespace lpx::core {

std::vector<float> llama3_rope_divisors(double freq_base, std::uint32_t n_rot, const Llama3RopeScaling& s) {
  std::vector<float> factors(n_rot / 2);
  const double low_wavelen = s.original_context / s.low_freq_factor;
  const double high_wavelen = s.original_context / s.high_freq_factor;
  for (std::size_t i = 0; i < factors.size(); ++i) {
    const double freq = std::pow(freq_base, -2.0 * static_cast<double>(i) / n_rot);
    const double wavelen = 2.0 * std::numbers::pi / freq;
    double divisor = 1.0;
    if (wavelen > low_wavelen) {
      divisor = s.factor;
    } else if (wavelen >= high_wavelen) {
      const double smooth = (s.original_context / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      divisor = 1.0 / ((1.0 - smooth) / s.factor + smooth);
    }
    factors[i] = static_cast<float>(divisor);
  }
  return factors;
}

Expected<std::vector<float>> llama3_rope_factors(const ModelFile& file, const Hyperparameters& h) {
  const std::string p = h.architecture + ".rope.scaling.";
  auto read = [&](const char* key, double fallback) -> Expected<double> {
    return file.has(p + key) ? file.get_float(p + key) : Expected<double>(fallback);
  };
  auto low = read("low_freq_factor", 1.0);
  auto high = read("high_freq_factor", 4.0);
  auto original = read("original_context_length", 8192.0);
  if (!low) return unexpected(low.error());
  if (!high) return unexpected(high.error());
  if (!original) return unexpected(original.error());
  if (!(*high > *low)) {
    return invalid_argument(p + "high_freq_factor must exceed low_freq_factor");
  }
  return llama3_rope_divisors(h.rope_freq_base, h.n_rot, {h.rope_scaling_factor, *low, *high, *original});
}

}  // namespace lpx::core
