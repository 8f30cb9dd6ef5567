// Dot products of f32 / f16 / bf16 weight rows with activations of the same type, in the two
// summation orders of the reference engine (see vec_dot.hpp). Products of two f16 or two bf16
// values are exact in f32; products of two f32 values are not, so fma placement matters there.
#include <cmath>

#include "reference/block_bytes.hpp"
#include "reference/half_precision.hpp"
#include "reference/vec_dot_blocks.hpp"

namespace lpx::kernels::reference::dots {
namespace {

struct F32 {
  static constexpr std::size_t kBytes = 4;
  static float read(const std::uint8_t* p) noexcept { return block_bytes::read_f32(p); }
};
struct F16 {
  static constexpr std::size_t kBytes = 2;
  static float read(const std::uint8_t* p) noexcept { return block_bytes::read_f16(p); }
};
struct BF16 {
  static constexpr std::size_t kBytes = 2;
  static float read(const std::uint8_t* p) noexcept {
    return bf16_to_f32(block_bytes::read_u16(p));
  }
};

// Four accumulators of eight lanes over steps of 32 elements: accumulator j, lane l takes
// elements 32k + 8j + l. `w(e)` and `a(e)` read element e.
template <class ReadW, class ReadA>
void four_accumulators(ReadW w, ReadA a, std::size_t steps, float (&sum)[4][8]) noexcept {
  for (std::size_t i = 0; i < steps * 32; i += 32) {
    for (std::size_t j = 0; j < 4; ++j) {
      for (std::size_t l = 0; l < 8; ++l) {
        const std::size_t e = i + 8 * j + l;
        sum[j][l] = std::fma(w(e), a(e), sum[j][l]);
      }
    }
  }
}

template <class T>
void four_accumulators(const std::uint8_t* w, const std::uint8_t* a, std::size_t steps,
                       float (&sum)[4][8]) noexcept {
  four_accumulators([w](std::size_t e) { return T::read(w + e * T::kBytes); },
                    [a](std::size_t e) { return T::read(a + e * T::kBytes); }, steps, sum);
}

}  // namespace

// The f32 / f16 fold: s0 += s2, s1 += s3, s0 += s1 lane-wise, then t = low half + high half,
// then (t0 + t1) + (t2 + t3).
float fold_pairwise(float (&sum)[4][8]) noexcept {
  float t[4];
  for (int l = 0; l < 8; ++l) {
    sum[0][l] += sum[2][l];
    sum[1][l] += sum[3][l];
    sum[0][l] += sum[1][l];
  }
  for (int l = 0; l < 4; ++l) t[l] = sum[0][l] + sum[0][l + 4];
  return (t[0] + t[1]) + (t[2] + t[3]);
}

void f32_steps(const float* w, const float* x, std::size_t steps, float (&sum)[4][8]) noexcept {
  four_accumulators([w](std::size_t e) { return w[e]; }, [x](std::size_t e) { return x[e]; }, steps,
                    sum);
}

float f32(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept {
  float sum[4][8] = {};
  four_accumulators<F32>(w, a, n / 32, sum);
  float result = fold_pairwise(sum);
  for (std::size_t i = n / 32 * 32; i < n; ++i) {
    result += F32::read(w + 4 * i) * F32::read(a + 4 * i);
  }
  return result;
}

float f16(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept {
  float sum[4][8] = {};
  four_accumulators<F16>(w, a, n / 32, sum);
  auto result = static_cast<double>(fold_pairwise(sum));
  for (std::size_t i = n / 32 * 32; i < n; ++i) {
    result += static_cast<double>(F16::read(w + 2 * i) * F16::read(a + 2 * i));
  }
  return static_cast<float>(result);
}

// bf16 folds differently: s = (s0 + s2) + (s1 + s3), g = low half + high half, then
// (g0 + g2) + (g1 + g3); the result and the leftovers are summed in double.
float bf16(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept {
  float sum[4][8] = {};
  four_accumulators<BF16>(w, a, n / 32, sum);
  float s[8], g[4];
  for (int l = 0; l < 8; ++l) s[l] = (sum[0][l] + sum[2][l]) + (sum[1][l] + sum[3][l]);
  for (int l = 0; l < 4; ++l) g[l] = s[l] + s[l + 4];
  auto result = static_cast<double>((g[0] + g[2]) + (g[1] + g[3]));
  for (std::size_t i = n / 32 * 32; i < n; ++i) {
    result += static_cast<double>(BF16::read(w + 2 * i) * BF16::read(a + 2 * i));
  }
  return static_cast<float>(result);
}

namespace {

template <class T>
float gemm_order(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept {
  float acc[8] = {};
  for (std::size_t i = 0; i < n; i += 8) {
    for (std::size_t l = 0; l < 8; ++l) {
      const std::size_t e = (i + l) * T::kBytes;
      acc[l] = std::fma(T::read(w + e), T::read(a + e), acc[l]);
    }
  }
  return hsum8(acc);
}

}  // namespace

float gemm_f32(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept {
  return gemm_order<F32>(w, a, n);
}
float gemm_f16(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept {
  return gemm_order<F16>(w, a, n);
}
float gemm_bf16(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept {
  return gemm_order<BF16>(w, a, n);
}

}  // namespace lpx::kernels::reference::dots
