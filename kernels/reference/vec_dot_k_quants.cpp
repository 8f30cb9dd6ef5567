// Dot products of the 256-element "K" types with q8_k activation blocks. Weight layouts: see
// dequantize_k_quants.cpp; activation: d f32 @0, q int8[256] @4, bsums int16[16] @260.
//
// Per block the AVX2 engine gathers exact int32 sums in eight lanes, converts them to f32 and
// accumulates acc[l] = fma(d, isum_l, acc[l]) with d = d_a * d_w. Lane l of a group of 32
// elements holds elements 4l..4l+3, weighted by their sub-block's scale. Minimum terms (Q4_K,
// Q5_K) and the -32 offset of Q6_K are folded in with the activation's bsums, each in the lane
// arrangement the engine uses — which is why they look different per type below.
#include <cmath>

#include "reference/block_bytes.hpp"
#include "reference/vec_dot_blocks.hpp"

namespace lpx::kernels::reference::dots {
namespace {

using block_bytes::read_f16;
using block_bytes::read_f32;
using block_bytes::read_i8;
using block_bytes::read_u16;

constexpr std::size_t kQ8KBytes = 292;

struct Q8K {
  float d;
  const std::uint8_t* q;      // 256 int8
  const std::uint8_t* bsums;  // 16 int16

  explicit Q8K(const std::uint8_t* a) noexcept : d(read_f32(a)), q(a + 4), bsums(a + 260) {}
  int value(int i) const noexcept { return read_i8(q + i); }
  int bsum(int g) const noexcept { return static_cast<std::int16_t>(read_u16(bsums + 2 * g)); }
};

// The 6-bit scales and mins of the eight sub-blocks of Q4_K / Q5_K (see
// dequantize_k_quants.cpp for the packing).
void k_scales_and_mins(const std::uint8_t* scales, int (&sc)[8], int (&mn)[8]) noexcept {
  for (int s = 0; s < 4; ++s) {
    sc[s] = scales[s] & 0x3F;
    mn[s] = scales[s + 4] & 0x3F;
  }
  for (int s = 4; s < 8; ++s) {
    sc[s] = (scales[s + 4] & 0x0F) | ((scales[s - 4] >> 6) << 4);
    mn[s] = (scales[s + 4] >> 4) | ((scales[s] >> 6) << 4);
  }
}

// Lane sums of Q4_K / Q5_K: sumi[l] = sum over sub-blocks s of sc[s] * (the products of
// elements 4l..4l+3 of sub-block s). qh is null for Q4_K.
void k_lane_sums(const std::uint8_t* qs, const std::uint8_t* qh, const int (&sc)[8], const Q8K& a,
                 int (&sumi)[8]) noexcept {
  for (int l = 0; l < 8; ++l) sumi[l] = 0;
  for (int s = 0; s < 8; ++s) {
    const std::uint8_t* pair = qs + 32 * (s / 2);
    const int shift = 4 * (s % 2);
    for (int l = 0; l < 8; ++l) {
      int isum = 0;
      for (int i = 4 * l; i < 4 * l + 4; ++i) {
        int q = (pair[i] >> shift) & 0x0F;
        if (qh != nullptr) q |= ((qh[i] >> s) & 1) << 4;
        isum += q * a.value(32 * s + i);
      }
      sumi[l] += sc[s] * isum;
    }
  }
}

// The minimum products of Q4_K / Q5_K in four int32 lanes: lane k pairs sub-blocks 2k and
// 2k + 1, each sub-block's activation sum being the sum of its two bsums.
void k_min_lanes(const int (&mn)[8], const Q8K& a, int (&prod)[4]) noexcept {
  for (int k = 0; k < 4; ++k) {
    const int s0 = a.bsum(4 * k) + a.bsum(4 * k + 1);
    const int s1 = a.bsum(4 * k + 2) + a.bsum(4 * k + 3);
    prod[k] = mn[2 * k] * s0 + mn[2 * k + 1] * s1;
  }
}

void accumulate(float d, const int (&sumi)[8], float (&acc)[8]) noexcept {
  for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(sumi[l]), acc[l]);
}

// Q4_K keeps the minimum terms in four f32 lanes, folded as (m0 + m2) + (m1 + m3) at the end;
// Q5_K sums them to one integer per block and accumulates a single f32.
float k_4_or_5_bit(const std::uint8_t* w, const std::uint8_t* a_row, std::size_t n,
                   std::size_t block_bytes, bool five_bit) noexcept {
  float acc[8] = {};
  float acc_m[4] = {};
  float summs = 0.0f;
  for (std::size_t b = 0; b < n / 256; ++b, w += block_bytes, a_row += kQ8KBytes) {
    const Q8K a(a_row);
    const float d = a.d * read_f16(w);
    const float dmin = -a.d * read_f16(w + 2);
    int sc[8], mn[8], sumi[8], prod[4];
    k_scales_and_mins(w + 4, sc, mn);
    k_lane_sums(five_bit ? w + 48 : w + 16, five_bit ? w + 16 : nullptr, sc, a, sumi);
    k_min_lanes(mn, a, prod);
    if (five_bit) {
      const int total = (prod[0] + prod[1]) + (prod[2] + prod[3]);
      summs = std::fma(dmin, static_cast<float>(total), summs);
    } else {
      for (int k = 0; k < 4; ++k) acc_m[k] = std::fma(dmin, static_cast<float>(prod[k]), acc_m[k]);
    }
    accumulate(d, sumi, acc);
  }
  if (five_bit) return hsum8(acc) + summs;
  return hsum8(acc) + ((acc_m[0] + acc_m[2]) + (acc_m[1] + acc_m[3]));
}

// The unsigned 6-bit value (0..63) of element e of a Q6_K block.
int q6_value(const std::uint8_t* block, int e) noexcept {
  const int half = e / 128;
  const int w = e % 128;
  const int low = (block[64 * half + w % 64] >> (4 * (w / 64))) & 0x0F;
  const int high = (block[128 + 32 * half + w % 32] >> (2 * (w / 32))) & 0x03;
  return low | (high << 4);
}

}  // namespace

float q4_k(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept {
  return k_4_or_5_bit(w, a, n, 144, false);
}

float q5_k(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept {
  return k_4_or_5_bit(w, a, n, 176, true);
}

// Q6_K: lane l of each 32-element group takes elements 4l..4l+3 times their (signed) sub-block
// scale, with q in 0..63; the -32 offset is then removed per lane as 32 * (bsum[2l] * sc[2l] +
// bsum[2l+1] * sc[2l+1]), pairing lane l with sub-blocks 2l and 2l + 1.
float q6_k(const std::uint8_t* w, const std::uint8_t* a_row, std::size_t n) noexcept {
  float acc[8] = {};
  for (std::size_t b = 0; b < n / 256; ++b, w += 210, a_row += kQ8KBytes) {
    const Q8K a(a_row);
    const float d = a.d * read_f16(w + 208);
    const std::uint8_t* scales = w + 192;
    int sumi[8] = {};
    for (int group = 0; group < 8; ++group) {
      for (int l = 0; l < 8; ++l) {
        const int first = 32 * group + 4 * l;
        int isum = 0;
        for (int e = first; e < first + 4; ++e) isum += q6_value(w, e) * a.value(e);
        sumi[l] += read_i8(scales + first / 16) * isum;
      }
    }
    for (int l = 0; l < 8; ++l) {
      sumi[l] -= 32 * (a.bsum(2 * l) * read_i8(scales + 2 * l) +
                       a.bsum(2 * l + 1) * read_i8(scales + 2 * l + 1));
    }
    accumulate(d, sumi, acc);
  }
  return hsum8(acc);
}

// Q8_K weights have no counterpart in the reference engine's CPU backend; LPX defines their dot
// like the other K types: d = d_a * d_w, lane l takes elements 4l..4l+3 of each group of 32.
float q8_k(const std::uint8_t* w, const std::uint8_t* a_row, std::size_t n) noexcept {
  float acc[8] = {};
  for (std::size_t b = 0; b < n / 256; ++b, w += kQ8KBytes, a_row += kQ8KBytes) {
    const Q8K a(a_row);
    const float d = a.d * read_f32(w);
    int sumi[8] = {};
    for (int group = 0; group < 8; ++group) {
      for (int l = 0; l < 8; ++l) {
        const int first = 32 * group + 4 * l;
        for (int e = first; e < first + 4; ++e) sumi[l] += read_i8(w + 4 + e) * a.value(e);
      }
    }
    accumulate(d, sumi, acc);
  }
  return hsum8(acc);
}

}  // namespace lpx::kernels::reference::dots
