#include "model/rope_scaling.hpp"

#include <cmath>
#include <numbers>
#include <string>

namespace lpx::core {

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
  std::vector<float> factors(h.n_rot / 2);
  const double low_wavelen = *original / *low;
  const double high_wavelen = *original / *high;
  for (std::size_t i = 0; i < factors.size(); ++i) {
    const double freq = std::pow(h.rope_freq_base, -2.0 * static_cast<double>(i) / h.n_rot);
    const double wavelen = 2.0 * std::numbers::pi / freq;
    double divisor = 1.0;
    if (wavelen > low_wavelen) {
      divisor = h.rope_scaling_factor;
    } else if (wavelen >= high_wavelen) {
      const double smooth = (*original / wavelen - *low) / (*high - *low);
      divisor = 1.0 / ((1.0 - smooth) / h.rope_scaling_factor + smooth);
    }
    factors[i] = static_cast<float>(divisor);
  }
  return factors;
}

}  // namespace lpx::core
