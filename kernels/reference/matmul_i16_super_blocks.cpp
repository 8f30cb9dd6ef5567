#include "reference/matmul_i16_super_blocks.hpp"

#include <cmath>
#include <cstring>

#include "lpx/kinds/tensor.h"
#include "reference/half_precision.hpp"
#include "reference/k_scales.hpp"
#include "reference/matmul_i16.hpp"
#include "reference/tensor_types.hpp"
#include "reference/vec_dot_blocks.hpp"

namespace lpx::kernels::reference {
namespace {

// A super-block's 256 weight integers (sub-block scales folded in), its dw and the minimums.
struct SuperBlock {
  int w[256];
  float d;
  float mw[8];
  bool has_min;
};

SuperBlock read_k_4_or_5_bit(const std::uint8_t* p, bool five_bit) noexcept {
  SuperBlock b{};
  b.d = f16_at(p);
  b.has_min = true;
  for (int j = 0; j < 8; ++j) {
    const KScaleAndMin sm = k_scale_and_min(p + 4, j);
    b.mw[j] = -(f16_at(p + 2) * static_cast<float>(sm.min));
    const std::uint8_t* pair = p + (five_bit ? 48 : 16) + 32 * (j / 2);
    for (int e = 0; e < 32; ++e) {
      int q = (pair[e] >> (4 * (j % 2))) & 0x0F;
      if (five_bit) q |= ((p[16 + e] >> j) & 1) << 4;
      b.w[32 * j + e] = sm.scale * q;
    }
  }
  return b;
}

// Element 32j + e: half h = j / 4, position i = j % 4 in it; low 4 bits from nibble i / 2 of
// ql[64h + 32(i % 2) + e], top 2 bits from bits 2i of qh[32h + e]; the int8 scale of its
// 16-element sub-block 8h + 2i + e / 16.
SuperBlock read_q6_k(const std::uint8_t* p) noexcept {
  SuperBlock b{};
  b.d = f16_at(p + 208);
  for (int j = 0; j < 8; ++j) {
    const int h = j / 4, i = j % 4;
    const std::uint8_t* ql = p + 64 * h + 32 * (i % 2);
    const std::uint8_t* qh = p + 128 + 32 * h;
    for (int e = 0; e < 32; ++e) {
      const int q = ((ql[e] >> (4 * (i / 2))) & 0x0F) | (((qh[e] >> (2 * i)) & 0x03) << 4);
      b.w[32 * j + e] = (q - 32) * static_cast<std::int8_t>(p[192 + 8 * h + 2 * i + e / 16]);
    }
  }
  return b;
}

}  // namespace

void quantize_i16_super_blocks(const float* x, std::size_t columns, std::size_t batch, void* out) noexcept {
  auto* bytes = static_cast<std::uint8_t*>(out);
  for (std::size_t r = 0; r < batch; ++r) {
    for (std::size_t k = 0; k < columns / 256; ++k, bytes += kI16SuperBlockBytes) {
      const float* v = x + r * columns + 256 * k;
      const I16Rounding rounding = i16_rounding_of(v, 256);
      std::memset(bytes, 0, kI16SuperBlockBytes);
      std::memcpy(bytes + kI16SuperBlockScaleOffset, &rounding.d, 4);
      for (int j = 0; j < 8; ++j) {
        const float s = round_i16_block(v + 32 * j, rounding, bytes + 64 * j);
        std::memcpy(bytes + kI16SuperBlockScaleOffset + 4 + 4 * j, &s, 4);
      }
    }
  }
}

float dot_i16_super_blocks(std::int32_t type, const void* w, const void* x, std::size_t columns) noexcept {
  const std::size_t block_bytes = traits_of(type)->block_bytes;
  const int span = type == LPX_TENSOR_Q6_K ? 128 : 256;
  const auto* wb = static_cast<const std::uint8_t*>(w);
  const auto* xb = static_cast<const std::uint8_t*>(x);
  float acc[8] = {};
  float macc[8] = {};
  bool has_min = false;
  for (std::size_t k = 0; k < columns / 256; ++k, wb += block_bytes, xb += kI16SuperBlockBytes) {
    const SuperBlock b = type == LPX_TENSOR_Q6_K ? read_q6_k(wb) : read_k_4_or_5_bit(wb, type == LPX_TENSOR_Q5_K);
    const float dd = b.d * f32_at(xb + kI16SuperBlockScaleOffset);
    for (int first = 0; first < 256; first += span) {
      // Each lane's total fits int32 (matmul_i16.hpp); int64 keeps the running sums defined.
      std::int64_t lanes[8] = {};
      for (int e = first; e < first + span; ++e) lanes[(e % 16) / 2] += std::int64_t{b.w[e]} * i16_at(xb + 2 * e);
      for (int l = 0; l < 8; ++l) acc[l] = std::fma(dd, static_cast<float>(lanes[l]), acc[l]);
    }
    if (b.has_min) {
      has_min = true;
      for (int j = 0; j < 8; ++j) macc[j] = std::fma(b.mw[j], f32_at(xb + kI16SuperBlockScaleOffset + 4 + 4 * j), macc[j]);
    }
  }
  const float sum = dots::hsum8(acc);
  return has_min ? sum + dots::hsum8(macc) : sum;
}

}  // namespace lpx::kernels::reference
