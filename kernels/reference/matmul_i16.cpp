#include "reference/matmul_i16.hpp"

#include <cmath>
#include <cstring>
#include <initializer_list>

#include "lpx/kinds/tensor.h"
#include "reference/half_precision.hpp"
#include "reference/matmul_i16_super_blocks.hpp"
#include "reference/tensor_types.hpp"
#include "reference/vec_dot_blocks.hpp"

namespace lpx::kernels::reference {
namespace {

// A 32-element weight block as integers, its scale and (the _1 types) its minimum.
struct WeightBlock {
  int w[32];
  float d;
  float m;
  bool has_min;
};

// The block at p.
WeightBlock read_block(std::int32_t type, const std::uint8_t* p) noexcept {
  WeightBlock b{};
  b.d = f16_at(p);
  switch (type) {
    case LPX_TENSOR_Q8_0:
      for (int e = 0; e < 32; ++e) b.w[e] = static_cast<std::int8_t>(p[2 + e]);
      break;
    case LPX_TENSOR_Q4_0:
      for (int e = 0; e < 16; ++e) {
        b.w[e] = (p[2 + e] & 0x0F) - 8;
        b.w[e + 16] = (p[2 + e] >> 4) - 8;
      }
      break;
    case LPX_TENSOR_Q4_1:
      b.m = f16_at(p + 2);
      b.has_min = true;
      for (int e = 0; e < 16; ++e) {
        b.w[e] = p[4 + e] & 0x0F;
        b.w[e + 16] = p[4 + e] >> 4;
      }
      break;
    case LPX_TENSOR_Q5_0:
    case LPX_TENSOR_Q5_1: {
      const bool one = type == LPX_TENSOR_Q5_1;
      if (one) {
        b.m = f16_at(p + 2);
        b.has_min = true;
      }
      std::uint32_t qh;
      std::memcpy(&qh, p + (one ? 4 : 2), 4);
      const std::uint8_t* qs = p + (one ? 8 : 6);
      for (int e = 0; e < 16; ++e) {
        const int low = (qs[e] & 0x0F) | static_cast<int>(((qh >> e) & 1u) << 4);
        const int high = (qs[e] >> 4) | static_cast<int>(((qh >> (e + 16)) & 1u) << 4);
        b.w[e] = one ? low : low - 16;
        b.w[e + 16] = one ? high : high - 16;
      }
      break;
    }
    default:
      break;
  }
  return b;
}

}  // namespace

bool i16_dot_type(std::int32_t type) noexcept {
  return type == LPX_TENSOR_Q8_0 || type == LPX_TENSOR_Q4_0 || type == LPX_TENSOR_Q4_1 || type == LPX_TENSOR_Q5_0 ||
         type == LPX_TENSOR_Q5_1 || type == LPX_TENSOR_Q4_K || type == LPX_TENSOR_Q5_K || type == LPX_TENSOR_Q6_K;
}

void quantize_activations_i16(std::int32_t type, const float* x, std::size_t columns, std::size_t batch,
                              void* out) noexcept {
  if (i16_super_blocks(type)) return quantize_i16_super_blocks(x, columns, batch, out);
  auto* bytes = static_cast<std::uint8_t*>(out);
  for (std::size_t r = 0; r < batch; ++r) {
    for (std::size_t k = 0; k < columns / 32; ++k, bytes += kI16BlockBytes) {
      const float* v = x + r * columns + 32 * k;
      const I16Rounding rounding = i16_rounding_of(v, 32);
      const float s = round_i16_block(v, rounding, bytes + 8);
      std::memcpy(bytes, &rounding.d, 4);
      std::memcpy(bytes + 4, &s, 4);
    }
  }
}

float dot_i16_activations(std::int32_t type, const void* w, const void* x, std::size_t columns) noexcept {
  if (!i16_dot_type(type)) return 0.0f;
  if (i16_super_blocks(type)) return dot_i16_super_blocks(type, w, x, columns);
  const std::size_t block_bytes = traits_of(type)->block_bytes;
  const auto* wb = static_cast<const std::uint8_t*>(w);
  const auto* xb = static_cast<const std::uint8_t*>(x);
  float acc[8] = {};
  float m = 0.0f;
  bool has_min = false;
  for (std::size_t k = 0; k < columns / 32; ++k, wb += block_bytes, xb += kI16BlockBytes) {
    const WeightBlock b = read_block(type, wb);
    const float dd = b.d * f32_at(xb);
    for (int l = 0; l < 8; ++l) {
      std::int32_t lane = 0;
      for (const int e : {2 * l, 2 * l + 1, 16 + 2 * l, 17 + 2 * l}) lane += b.w[e] * i16_at(xb + 8 + 2 * e);
      acc[l] = std::fma(dd, static_cast<float>(lane), acc[l]);
    }
    if (b.has_min) {
      has_min = true;
      m = std::fma(b.m, f32_at(xb + 4), m);
    }
  }
  const float sum = dots::hsum8(acc);
  return has_min ? sum + m : sum;
}

void dot_rows_i16(const I16MatmulArgs& args, std::size_t row_begin, std::size_t row_end) noexcept {
  const auto* weights = static_cast<const std::uint8_t*>(args.weights);
  const auto* x = static_cast<const std::uint8_t*>(args.x);
  const std::size_t x_bytes = i16_row_bytes(args.columns);
  for (std::size_t r = row_begin; r < row_end; ++r) {
    for (std::size_t b = 0; b < args.batch; ++b) {
      args.y[b * args.rows + r] =
          dot_i16_activations(args.type, weights + r * args.row_bytes, x + b * x_bytes, args.columns);
    }
  }
}

}  // namespace lpx::kernels::reference
