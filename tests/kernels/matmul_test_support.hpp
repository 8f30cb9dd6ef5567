// Shared helpers of the matmul kernel tests: random weights of every tensor type (random bytes
// with finite, realistic scales, so every bit pattern of the quantized values is exercised),
// random activations that are never all zero, and bit-exact comparison.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "lpx/kinds/tensor.h"
#include "reference/dequantize.hpp"
#include "reference/half_precision.hpp"
#include "reference/quantize_activations.hpp"
#include "reference/tensor_types.hpp"

namespace lpx::kernels::matmul_test {

inline constexpr lpx_tensor_type kAllTypes[] = {LPX_TENSOR_F32,  LPX_TENSOR_F16,  LPX_TENSOR_BF16,
                                                LPX_TENSOR_Q8_0, LPX_TENSOR_Q4_0, LPX_TENSOR_Q4_1,
                                                LPX_TENSOR_Q5_0, LPX_TENSOR_Q5_1, LPX_TENSOR_Q4_K,
                                                LPX_TENSOR_Q5_K, LPX_TENSOR_Q6_K, LPX_TENSOR_Q8_K};

inline std::string type_name(std::int32_t type) { return reference::traits_of(type)->name; }

class Random {
 public:
  explicit Random(std::uint32_t seed) : engine_(seed) {}

  float normal(float scale = 1.0f) { return std::normal_distribution<float>(0.0f, scale)(engine_); }
  float uniform(float lo, float hi) {
    return std::uniform_real_distribution<float>(lo, hi)(engine_);
  }
  std::uint32_t below(std::uint32_t bound) {
    return std::uniform_int_distribution<std::uint32_t>(0, bound - 1)(engine_);
  }
  std::uint8_t byte() { return static_cast<std::uint8_t>(engine_() & 0xFFu); }

  // batch x columns activations, each row with its own magnitude; element 0 of each row is
  // never zero.
  std::vector<float> activations(std::size_t batch, std::size_t columns) {
    std::vector<float> x(batch * columns);
    for (std::size_t b = 0; b < batch; ++b) {
      const float magnitude = std::exp(normal(1.5f));
      for (std::size_t c = 0; c < columns; ++c) x[b * columns + c] = normal(magnitude);
      if (x[b * columns] == 0.0f) x[b * columns] = magnitude;
    }
    return x;
  }

  // `rows` rows of `columns` elements of `type`: random bytes, with every scale field set to a
  // finite f16 (or f32) of realistic size; float types get normal values.
  std::vector<std::uint8_t> weights(std::int32_t type, std::size_t rows, std::size_t columns) {
    const reference::TensorTypeTraits* traits = reference::traits_of(type);
    const std::size_t n = rows * columns;
    std::vector<std::uint8_t> w(*reference::row_size_bytes(type, columns) * rows);
    if (type == LPX_TENSOR_F32) {
      for (std::size_t i = 0; i < n; ++i) put_f32(&w[4 * i], normal(0.1f));
      return w;
    }
    if (type == LPX_TENSOR_F16 || type == LPX_TENSOR_BF16) {
      for (std::size_t i = 0; i < n; ++i) {
        const float v = normal(0.1f);
        put_u16(&w[2 * i],
                type == LPX_TENSOR_F16 ? reference::f32_to_f16(v) : reference::f32_to_bf16(v));
      }
      return w;
    }
    for (std::uint8_t& b : w) b = byte();
    for (std::size_t block = 0; block < n / traits->block_elements; ++block) {
      std::uint8_t* p = w.data() + block * traits->block_bytes;
      switch (type) {
        case LPX_TENSOR_Q8_0:
        case LPX_TENSOR_Q4_0:
        case LPX_TENSOR_Q5_0:
          put_f16(p, scale());
          break;
        case LPX_TENSOR_Q4_1:
        case LPX_TENSOR_Q5_1:
        case LPX_TENSOR_Q4_K:
        case LPX_TENSOR_Q5_K:
          put_f16(p, scale());
          put_f16(p + 2, -scale());
          break;
        case LPX_TENSOR_Q6_K:
          put_f16(p + 208, scale());
          break;
        case LPX_TENSOR_Q8_K:
          put_f32(p, scale());
          break;
        default:
          break;
      }
    }
    return w;
  }

 private:
  float scale() { return uniform(0.001f, 0.05f); }
  static void put_u16(std::uint8_t* p, std::uint16_t v) { std::memcpy(p, &v, 2); }
  static void put_f16(std::uint8_t* p, float v) { put_u16(p, reference::f32_to_f16(v)); }
  static void put_f32(std::uint8_t* p, float v) { std::memcpy(p, &v, 4); }

  std::mt19937 engine_;
};

// Bitwise equality of two float arrays, reporting the first few differences.
inline ::testing::AssertionResult same_bits(const std::vector<float>& expected,
                                            const std::vector<float>& actual) {
  if (expected.size() != actual.size()) return ::testing::AssertionFailure() << "sizes differ";
  int shown = 0;
  std::size_t differing = 0;
  ::testing::AssertionResult failure = ::testing::AssertionFailure();
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (std::bit_cast<std::uint32_t>(expected[i]) == std::bit_cast<std::uint32_t>(actual[i])) {
      continue;
    }
    ++differing;
    if (shown++ < 4)
      failure << "[" << i << "] expected " << expected[i] << " got " << actual[i] << "; ";
  }
  if (differing == 0) return ::testing::AssertionSuccess();
  return failure << differing << " of " << expected.size() << " differ";
}

// One row of activations in dot format (reference/quantize_activations.hpp), back to f32.
inline std::vector<float> dequantize_activations(std::int32_t type, const std::uint8_t* row,
                                                 std::size_t columns) {
  using reference::DotFormat;
  std::vector<float> out(columns);
  const auto as = [&](lpx_tensor_type layout) {
    EXPECT_EQ(reference::dequantize_row(layout, row, columns, out.data()),
              reference::DequantizeStatus::ok);
  };
  switch (*reference::dot_format_of(type)) {
    case DotFormat::f32:
      as(LPX_TENSOR_F32);
      break;
    case DotFormat::f16:
      as(LPX_TENSOR_F16);
      break;
    case DotFormat::bf16:
      as(LPX_TENSOR_BF16);
      break;
    case DotFormat::q8_0:  // the Q8_0 tensor layout
      as(LPX_TENSOR_Q8_0);
      break;
    case DotFormat::q8_k:  // the Q8_K tensor layout
      as(LPX_TENSOR_Q8_K);
      break;
    case DotFormat::q8_1:  // d f16 @0, s f16 @2, q int8[32] @4
      for (std::size_t b = 0; b < columns / 32; ++b) {
        const std::uint8_t* block = row + 36 * b;
        std::uint16_t d;
        std::memcpy(&d, block, 2);
        for (std::size_t i = 0; i < 32; ++i) {
          out[32 * b + i] =
              reference::f16_to_f32(d) * static_cast<float>(static_cast<std::int8_t>(block[4 + i]));
        }
      }
      break;
  }
  return out;
}

inline double f16_at(const std::uint8_t* p) {
  std::uint16_t v;
  std::memcpy(&v, p, 2);
  return static_cast<double>(reference::f16_to_f32(v));
}

// The float64 value of one matmul output as the contract defines it: the weight row (its
// values `w_values`, its bytes `w_bytes`) times the activation row `a` as rounded to the dot
// format. Q4_1 / Q5_1 multiply their minimum by the stored q8_1 sum s = f16(d * sum(q)), not by
// the rounded d times sum(q), so those are computed per block from the raw fields. `magnitude`
// receives the sum of the terms' absolute values, for tolerances.
inline double exact_dot(std::int32_t type, const std::uint8_t* w_bytes, const float* w_values,
                        const std::uint8_t* a, std::size_t columns, double& magnitude) {
  double sum = 0;
  magnitude = 0;
  if (*reference::dot_format_of(type) != reference::DotFormat::q8_1) {
    const std::vector<float> av = dequantize_activations(type, a, columns);
    for (std::size_t c = 0; c < columns; ++c) {
      const double term = static_cast<double>(w_values[c]) * static_cast<double>(av[c]);
      sum += term;
      magnitude += std::fabs(term);
    }
    return sum;
  }
  const bool five_bit = type == LPX_TENSOR_Q5_1;
  const std::uint8_t* w = w_bytes;
  for (std::size_t b = 0; b < columns / 32; ++b, w += five_bit ? 24 : 20, a += 36) {
    const std::uint8_t* qs = w + (five_bit ? 8 : 4);
    std::uint32_t qh = 0;
    if (five_bit) std::memcpy(&qh, w + 4, 4);
    std::int64_t isum = 0;
    for (std::size_t i = 0; i < 32; ++i) {
      const int high = static_cast<int>((qh >> i) & 1u) << 4;
      const int q = (i < 16 ? qs[i] & 0x0F : qs[i - 16] >> 4) | high;
      isum += q * static_cast<std::int8_t>(a[4 + i]);
    }
    const double scaled = f16_at(w) * f16_at(a) * static_cast<double>(isum);
    const double minimum = f16_at(w + 2) * f16_at(a + 2);
    sum += scaled + minimum;
    magnitude += std::fabs(scaled) + std::fabs(minimum);
  }
  return sum;
}

}  // namespace lpx::kernels::matmul_test
