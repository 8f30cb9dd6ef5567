#include "reference/quantize_weights.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "reference/half_precision.hpp"
#include "reference/tensor_types.hpp"

namespace lpx::kernels::reference {
namespace {

constexpr int kBlock = 32;  // elements per block of the 32-element formats

// C's float-to-integer conversion as x86 compilers emit it (cvttss2si): truncation toward zero,
// and INT32_MIN for NaN and values out of int32's range (C++ leaves those undefined). ggml's
// quantizers rely on it where a block's inverse scale overflows (a block of tiny values), so
// these keep its bytes there too, without undefined behaviour.
std::int32_t truncate_to_int(float value) noexcept {
  if (!(std::fabs(value) < 2147483648.0f)) return std::numeric_limits<std::int32_t>::min();
  return static_cast<std::int32_t>(value);
}
// The low byte of that, as C's conversion to a char type keeps it.
std::int8_t to_int8(float value) noexcept { return static_cast<std::int8_t>(truncate_to_int(value)); }
std::uint8_t to_uint8(float value) noexcept { return static_cast<std::uint8_t>(truncate_to_int(value)); }

void put_f16(std::uint8_t* p, float value) noexcept {
  const std::uint16_t bits = f32_to_f16(value);
  p[0] = static_cast<std::uint8_t>(bits & 0xFF);
  p[1] = static_cast<std::uint8_t>(bits >> 8);
}

void put_u32(std::uint8_t* p, std::uint32_t value) noexcept {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(value >> (8 * i));
}

// The element of largest magnitude, with its sign (the first one on a tie): the symmetric formats
// map it to their most negative level, so that the full range is used on its side.
float signed_absmax(const float* x) noexcept {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < kBlock; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

void min_max(const float* x, float& lo, float& hi) noexcept {
  lo = std::numeric_limits<float>::max();
  hi = -std::numeric_limits<float>::max();
  for (int j = 0; j < kBlock; ++j) {
    lo = std::min(lo, x[j]);  // a NaN neither lowers nor raises, as `if (v < lo)` does
    hi = std::max(hi, x[j]);
  }
}

// Q8_0: d = absmax / 127, q = round(x / d), 34 bytes: f16 d, 32 x int8.
void block_q8_0(const float* x, std::uint8_t* out) noexcept {
  float amax = 0.0f;
  for (int j = 0; j < kBlock; ++j) amax = amax > std::fabs(x[j]) ? amax : std::fabs(x[j]);  // as ggml's MAX
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  put_f16(out, d);
  for (int j = 0; j < kBlock; ++j) {
    out[2 + j] = static_cast<std::uint8_t>(to_int8(std::round(x[j] * id)));
  }
}

// Q4_0 and Q5_0: d = signed absmax / -levels/2, q = x / d + levels/2 rounded by truncating
// x/d + levels/2 + 0.5 and clamped to the top level. Element j and j + 16 share byte j.
template <int kBits>
void block_symmetric(const float* x, std::uint8_t* out) noexcept {
  constexpr int kHalf = 1 << (kBits - 1);
  const float d = signed_absmax(x) / static_cast<float>(-kHalf);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  put_f16(out, d);
  std::uint8_t* qs = out + (kBits == 5 ? 6 : 2);
  std::uint32_t qh = 0;
  for (int j = 0; j < kBlock / 2; ++j) {
    const float offset = static_cast<float>(kHalf) + 0.5f;
    const int q0 = std::min(2 * kHalf - 1, static_cast<int>(to_int8(x[j] * id + offset)));
    const int q1 = std::min(2 * kHalf - 1, static_cast<int>(to_int8(x[j + 16] * id + offset)));
    qs[j] = static_cast<std::uint8_t>((q0 & 0x0F) | ((q1 & 0x0F) << 4));
    qh |= static_cast<std::uint32_t>((q0 >> 4) & 1) << j;
    qh |= static_cast<std::uint32_t>((q1 >> 4) & 1) << (j + 16);
  }
  if (kBits == 5) put_u32(out + 2, qh);
}

// Q4_1 and Q5_1: d = (max - min) / (levels - 1), m = min, q = (x - m) / d rounded by truncating
// +0.5 (Q4_1 also clamps to 15).
template <int kBits>
void block_offset(const float* x, std::uint8_t* out) noexcept {
  constexpr int kTop = (1 << kBits) - 1;
  float lo = 0.0f, hi = 0.0f;
  min_max(x, lo, hi);
  const float d = (hi - lo) / static_cast<float>(kTop);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  put_f16(out, d);
  put_f16(out + 2, lo);
  std::uint8_t* qs = out + (kBits == 5 ? 8 : 4);
  std::uint32_t qh = 0;
  for (int j = 0; j < kBlock / 2; ++j) {
    const float v0 = (x[j] - lo) * id + 0.5f;
    const float v1 = (x[j + 16] - lo) * id + 0.5f;
    const int q0 = kBits == 4 ? std::min(kTop, static_cast<int>(to_int8(v0))) : static_cast<int>(to_uint8(v0));
    const int q1 = kBits == 4 ? std::min(kTop, static_cast<int>(to_int8(v1))) : static_cast<int>(to_uint8(v1));
    qs[j] = static_cast<std::uint8_t>((q0 & 0x0F) | ((q1 & 0x0F) << 4));
    qh |= static_cast<std::uint32_t>((q0 >> 4) & 1) << j;
    qh |= static_cast<std::uint32_t>((q1 >> 4) & 1) << (j + 16);
  }
  if (kBits == 5) put_u32(out + 4, qh);
}

// --- K-quants: super-blocks of 256 in sub-blocks of 16 or 32 ----------------------------------

constexpr int kSuper = 256;
constexpr float kGroupMaxEps = 1e-15f;

// Round to nearest, ties to even, through the float magic number 1.5 * 2^23 (the values are far
// below 2^22 in magnitude).
int nearest_int(float value) noexcept {
  const float shifted = value + 12582912.0f;
  std::int32_t bits = 0;
  std::memcpy(&bits, &shifted, sizeof bits);
  return (bits & 0x007FFFFF) - 0x00400000;
}

// The scale of `n` values on the signed levels [-nmax, nmax): start from the one that maps the
// largest magnitude to -nmax, then try 18 nearby scales and keep the one with the smallest
// weighted squared error (weights x^2); `levels` gets each value's level + nmax.
float signed_levels_scale(int n, int nmax, const float* x, std::int8_t* levels) noexcept {
  float max = 0.0f, amax = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    for (int i = 0; i < n; ++i) levels[i] = 0;
    return 0.0f;
  }
  const auto level = [&](float iscale, int i) { return std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i]))); };
  float iscale = static_cast<float>(-nmax) / max;
  float sumlx = 0.0f, suml2 = 0.0f;
  for (int i = 0; i < n; ++i) {
    const int l = level(iscale, i);
    levels[i] = static_cast<std::int8_t>(l + nmax);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * static_cast<float>(l);
    suml2 += w * static_cast<float>(l) * static_cast<float>(l);
  }
  float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int step = -9; step <= 9; ++step) {
    if (step == 0) continue;
    iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(step)) / max;
    sumlx = suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = level(iscale, i);
      const float w = x[i] * x[i];
      sumlx += w * x[i] * static_cast<float>(l);
      suml2 += w * static_cast<float>(l) * static_cast<float>(l);
    }
    if (suml2 > 0.0f && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) levels[i] = static_cast<std::int8_t>(nmax + level(iscale, i));
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// Q6_K, 210 bytes: ql[128] (low 4 bits), qh[64] (high 2 bits), 16 int8 sub-block scales, f16 d.
// Each sub-block of 16 gets its best scale; the scales are quantized to int8 against the largest,
// and the values requantized to 6 bits against their quantized scale.
void block_q6_k(const float* x, std::uint8_t* out) noexcept {
  std::int8_t levels[kSuper];
  float scales[kSuper / 16];
  float max_scale = 0.0f, max_abs_scale = 0.0f;
  for (int ib = 0; ib < kSuper / 16; ++ib) {
    const float scale = signed_levels_scale(16, 32, x + 16 * ib, levels + 16 * ib);
    scales[ib] = scale;
    if (std::fabs(scale) > max_abs_scale) {
      max_abs_scale = std::fabs(scale);
      max_scale = scale;
    }
  }
  std::uint8_t* ql = out;
  std::uint8_t* qh = out + 128;
  auto* sc = out + 192;
  std::uint8_t* d_bytes = out + 208;
  if (max_abs_scale < kGroupMaxEps) {
    std::memset(out, 0, 210);
    return;
  }
  const float iscale = -128.0f / max_scale;
  put_f16(d_bytes, 1.0f / iscale);
  const float d_all = f16_to_f32(f32_to_f16(1.0f / iscale));
  for (int ib = 0; ib < kSuper / 16; ++ib) {
    sc[ib] = static_cast<std::uint8_t>(static_cast<std::int8_t>(std::min(127, nearest_int(iscale * scales[ib]))));
  }
  for (int j = 0; j < kSuper / 16; ++j) {
    const float d = d_all * static_cast<float>(static_cast<std::int8_t>(sc[j]));
    if (d == 0.0f) continue;
    for (int ii = 0; ii < 16; ++ii) {
      const int l = std::max(-32, std::min(31, nearest_int(x[16 * j + ii] / d)));
      levels[16 * j + ii] = static_cast<std::int8_t>(l + 32);
    }
  }
  for (int half = 0; half < kSuper; half += 128) {
    const std::int8_t* L = levels + half;
    for (int l = 0; l < 32; ++l) {
      const int q1 = L[l] & 0xF, q2 = L[l + 32] & 0xF, q3 = L[l + 64] & 0xF, q4 = L[l + 96] & 0xF;
      ql[l] = static_cast<std::uint8_t>(q1 | (q3 << 4));
      ql[l + 32] = static_cast<std::uint8_t>(q2 | (q4 << 4));
      qh[l] = static_cast<std::uint8_t>((L[l] >> 4) | ((L[l + 32] >> 4) << 2) | ((L[l + 64] >> 4) << 4) |
                                        ((L[l + 96] >> 4) << 6));
    }
    ql += 64;
    qh += 32;
  }
}

// The scale and offset of `n` values on the levels [0, nmax], with weighted squared error:
// start from the levels spanning [min(x, 0), max(x)], then try `steps` + 1 level counts from
// nmax + rmin in increments of rdelta, each with its least-squares scale and offset (an offset
// above 0 is clamped to 0), and keep the best. Returns the scale; *negated_min gets -offset.
float offset_levels_scale(int n, int nmax, const float* x, const float* weights, std::uint8_t* levels,
                          float* negated_min, float rmin, float rdelta, int steps) noexcept {
  float min = x[0], max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    sum_w += weights[i];
    sum_x += weights[i] * x[i];
  }
  if (min > 0.0f) min = 0.0f;
  if (max == min) {
    for (int i = 0; i < n; ++i) levels[i] = 0;
    *negated_min = -min;
    return 0.0f;
  }
  const auto level = [&](float iscale, int i) { return std::max(0, std::min(nmax, nearest_int(iscale * (x[i] - min)))); };
  float iscale = static_cast<float>(nmax) / (max - min);
  float scale = 1.0f / iscale;
  float best_error = 0.0f;
  for (int i = 0; i < n; ++i) {
    levels[i] = static_cast<std::uint8_t>(level(iscale, i));
    const float diff = scale * static_cast<float>(levels[i]) + min - x[i];
    best_error += weights[i] * (diff * diff);
  }
  std::uint8_t trial[32];
  for (int step = 0; step <= steps; ++step) {
    iscale = (rmin + rdelta * static_cast<float>(step) + static_cast<float>(nmax)) / (max - min);
    float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = level(iscale, i);
      trial[i] = static_cast<std::uint8_t>(l);
      const float wl = weights[i] * static_cast<float>(l);
      sum_l += wl;
      sum_l2 += wl * static_cast<float>(l);
      sum_xl += wl * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (det <= 0.0f) continue;
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
    float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
    if (this_min > 0.0f) {
      this_min = 0.0f;
      this_scale = sum_xl / sum_l2;
    }
    float error = 0.0f;
    for (int i = 0; i < n; ++i) {
      const float diff = this_scale * static_cast<float>(trial[i]) + this_min - x[i];
      error += weights[i] * (diff * diff);
    }
    if (error < best_error) {
      for (int i = 0; i < n; ++i) levels[i] = trial[i];
      best_error = error;
      scale = this_scale;
      min = this_min;
    }
  }
  *negated_min = -min;
  return scale;
}

// The 6-bit scale and min of sub-block j from the 12 packed bytes of Q4_K and Q5_K.
void scale_min_k4(int j, const std::uint8_t* q, int& scale, int& min) noexcept {
  if (j < 4) {
    scale = q[j] & 63;
    min = q[j + 4] & 63;
  } else {
    scale = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    min = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// Q4_K (144 bytes: f16 d, f16 dmin, 12 bytes of 6-bit scales and mins, 128 bytes of 4-bit
// levels) and Q5_K (176 bytes: the same with 32 bytes of fifth bits before the levels). Each
// sub-block of 32 gets its scale and min (weights: the sub-block's RMS plus |x|); both are
// quantized to 6 bits against the largest, and the values requantized against them.
template <int kBits>
void block_k_offset(const float* x, std::uint8_t* out) noexcept {
  constexpr int kTop = (1 << kBits) - 1;
  std::uint8_t levels[kSuper];
  float weights[32], scales[kSuper / 32], mins[kSuper / 32];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < kSuper / 32; ++j) {
    const float* xj = x + 32 * j;
    float sum_x2 = 0.0f;
    for (int l = 0; l < 32; ++l) sum_x2 += xj[l] * xj[l];
    const float av_x = std::sqrt(sum_x2 / 32.0f);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xj[l]);
    scales[j] = kBits == 4 ? offset_levels_scale(32, kTop, xj, weights, levels + 32 * j, &mins[j], -1.0f, 0.1f, 20)
                           : offset_levels_scale(32, kTop, xj, weights, levels + 32 * j, &mins[j], -0.5f, 0.1f, 15);
    max_scale = std::max(max_scale, scales[j]);
    max_min = std::max(max_min, mins[j]);
  }
  const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
  std::uint8_t* sc = out + 4;
  for (int j = 0; j < kSuper / 32; ++j) {
    const int ls = std::min(63, static_cast<int>(static_cast<std::uint8_t>(nearest_int(inv_scale * scales[j]))));
    const int lm = std::min(63, static_cast<int>(static_cast<std::uint8_t>(nearest_int(inv_min * mins[j]))));
    if (j < 4) {
      sc[j] = static_cast<std::uint8_t>(ls);
      sc[j + 4] = static_cast<std::uint8_t>(lm);
    } else {
      sc[j + 4] = static_cast<std::uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
      sc[j - 4] = static_cast<std::uint8_t>(sc[j - 4] | ((ls >> 4) << 6));
      sc[j] = static_cast<std::uint8_t>(sc[j] | ((lm >> 4) << 6));
    }
  }
  put_f16(out, max_scale / 63.0f);
  put_f16(out + 2, max_min / 63.0f);
  const float d_all = f16_to_f32(f32_to_f16(max_scale / 63.0f));
  const float dmin_all = f16_to_f32(f32_to_f16(max_min / 63.0f));
  for (int j = 0; j < kSuper / 32; ++j) {
    int scale = 0, min = 0;
    scale_min_k4(j, sc, scale, min);
    const float d = d_all * static_cast<float>(scale);
    if (d == 0.0f) continue;
    const float dm = dmin_all * static_cast<float>(min);
    for (int ii = 0; ii < 32; ++ii) {
      levels[32 * j + ii] = static_cast<std::uint8_t>(std::max(0, std::min(kTop, nearest_int((x[32 * j + ii] + dm) / d))));
    }
  }
  std::uint8_t* qh = out + 16;
  std::uint8_t* qs = out + 16 + (kBits == 5 ? 32 : 0);
  if (kBits == 5) std::memset(qh, 0, 32);
  for (int n = 0, pair = 0; n < kSuper; n += 64, ++pair) {
    for (int j = 0; j < 32; ++j) {
      int l1 = levels[n + j], l2 = levels[n + j + 32];
      if (kBits == 5) {
        if (l1 > 15) {
          l1 -= 16;
          qh[j] = static_cast<std::uint8_t>(qh[j] | (1u << (2 * pair)));
        }
        if (l2 > 15) {
          l2 -= 16;
          qh[j] = static_cast<std::uint8_t>(qh[j] | (2u << (2 * pair)));
        }
      }
      qs[j] = static_cast<std::uint8_t>(l1 | (l2 << 4));
    }
    qs += 32;
  }
}

using BlockFn = void (*)(const float*, std::uint8_t*) noexcept;

struct BlockQuantizer {
  BlockFn fn;
  int elements;
};

BlockQuantizer block_quantizer(lpx_tensor_type type) noexcept {
  switch (type) {
    case LPX_TENSOR_Q8_0: return {&block_q8_0, kBlock};
    case LPX_TENSOR_Q4_0: return {&block_symmetric<4>, kBlock};
    case LPX_TENSOR_Q5_0: return {&block_symmetric<5>, kBlock};
    case LPX_TENSOR_Q4_1: return {&block_offset<4>, kBlock};
    case LPX_TENSOR_Q5_1: return {&block_offset<5>, kBlock};
    case LPX_TENSOR_Q4_K: return {&block_k_offset<4>, kSuper};
    case LPX_TENSOR_Q5_K: return {&block_k_offset<5>, kSuper};
    case LPX_TENSOR_Q6_K: return {&block_q6_k, kSuper};
    default: return {nullptr, 0};
  }
}

}  // namespace

bool can_quantize_weights(lpx_tensor_type type) noexcept {
  return type == LPX_TENSOR_F16 || type == LPX_TENSOR_BF16 || block_quantizer(type).fn != nullptr;
}

void quantize_weight_rows(lpx_tensor_type type, const float* in, std::int64_t rows,
                          std::int64_t columns, std::uint8_t* out) noexcept {
  const std::int64_t count = rows * columns;
  if (type == LPX_TENSOR_F16 || type == LPX_TENSOR_BF16) {
    for (std::int64_t i = 0; i < count; ++i) {
      const std::uint16_t bits = type == LPX_TENSOR_F16 ? f32_to_f16(in[i]) : f32_to_bf16(in[i]);
      out[2 * i] = static_cast<std::uint8_t>(bits & 0xFF);
      out[2 * i + 1] = static_cast<std::uint8_t>(bits >> 8);
    }
    return;
  }
  const BlockQuantizer q = block_quantizer(type);
  const auto block_bytes = static_cast<std::int64_t>(*row_size_bytes(type, static_cast<std::uint64_t>(q.elements)));
  for (std::int64_t b = 0; b < count / q.elements; ++b) q.fn(in + b * q.elements, out + b * block_bytes);
}

bool quantized_rows_finite(lpx_tensor_type type, const std::uint8_t* data, std::int64_t rows,
                           std::int64_t columns) noexcept {
  const auto finite16 = [&](std::int64_t at, bool bf16) {
    const auto bits = static_cast<std::uint16_t>(data[at] | (data[at + 1] << 8));
    return bf16 ? (bits & 0x7F80u) != 0x7F80u : (bits & 0x7C00u) != 0x7C00u;
  };
  const std::int64_t count = rows * columns;
  if (type == LPX_TENSOR_F16 || type == LPX_TENSOR_BF16) {
    for (std::int64_t i = 0; i < count; ++i) {
      if (!finite16(2 * i, type == LPX_TENSOR_BF16)) return false;
    }
    return true;
  }
  // Offsets of the f16 fields in each block.
  std::int64_t fields[2] = {0, -1};
  switch (type) {
    case LPX_TENSOR_Q4_1:
    case LPX_TENSOR_Q5_1:
    case LPX_TENSOR_Q4_K:
    case LPX_TENSOR_Q5_K: fields[1] = 2; break;
    case LPX_TENSOR_Q6_K: fields[0] = 208; break;
    default: break;
  }
  const auto elements = static_cast<std::int64_t>(tensor_type_traits(type)->block_elements);
  const auto bytes = static_cast<std::int64_t>(tensor_type_traits(type)->block_bytes);
  for (std::int64_t b = 0; b < count / elements; ++b) {
    for (std::int64_t f : fields) {
      if (f >= 0 && !finite16(b * bytes + f, false)) return false;
    }
  }
  return true;
}

}  // namespace lpx::kernels::reference
