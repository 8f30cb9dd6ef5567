// Dot products of the 32-element block types with q8_0 / q8_1 activation blocks.
//
// Per block: d = d_w * d_a (f32 product of the two f16 scales); lane l (0..7) gets the exact
// integer sum of q_w[i] * q_a[i] over elements i = 4l..4l+3, and acc[l] = fma(d, isum, acc[l]).
// Q4_1 / Q5_1 add the minimum separately, summs = fma(m_w, s_a, summs), and return
// hsum8(acc) + summs. (Weight layouts: see dequantize_32_element_quants.cpp.)
#include <cmath>

#include "reference/block_bytes.hpp"
#include "reference/vec_dot_blocks.hpp"

namespace lpx::kernels::reference::dots {
namespace {

using block_bytes::read_f16;
using block_bytes::read_i8;
using block_bytes::read_u32;

constexpr std::size_t kQ8_0Bytes = 34;
constexpr std::size_t kQ8_1Bytes = 36;

// The signed weight values of one block, in element order.
using BlockValues = int[32];

void nibbles(const std::uint8_t* qs, BlockValues& q) noexcept {
  for (int j = 0; j < 16; ++j) {
    q[j] = qs[j] & 0x0F;
    q[j + 16] = qs[j] >> 4;
  }
}

void five_bits(const std::uint8_t* qh_bytes, const std::uint8_t* qs, BlockValues& q) noexcept {
  nibbles(qs, q);
  const std::uint32_t qh = read_u32(qh_bytes);
  for (int i = 0; i < 32; ++i) q[i] |= static_cast<int>((qh >> i) & 1u) << 4;
}

// acc[l] = fma(d, sum of q[i] * a[i] over i in 4l..4l+3, acc[l]).
void accumulate_block(float d, const BlockValues& q, const std::uint8_t* a,
                      float (&acc)[8]) noexcept {
  for (int l = 0; l < 8; ++l) {
    int isum = 0;
    for (int i = 4 * l; i < 4 * l + 4; ++i) isum += q[i] * read_i8(a + i);
    acc[l] = std::fma(d, static_cast<float>(isum), acc[l]);
  }
}

// The shape shared by the five types: `decode` fills the block's values and returns its f16
// scale (and, through `m`, its minimum, where it has one).
template <std::size_t kWeightBytes, std::size_t kActivationBytes, class Decode>
float dot_blocks(const std::uint8_t* w, const std::uint8_t* a, std::size_t n,
                 Decode decode) noexcept {
  float acc[8] = {};
  float summs = 0.0f;
  constexpr std::size_t kQsOffset = kActivationBytes - 32;
  for (std::size_t b = 0; b < n / 32; ++b, w += kWeightBytes, a += kActivationBytes) {
    BlockValues q;
    float m = 0.0f;
    const float dw = decode(w, q, m);
    accumulate_block(dw * read_f16(a), q, a + kQsOffset, acc);
    if constexpr (kActivationBytes == kQ8_1Bytes) summs = std::fma(m, read_f16(a + 2), summs);
  }
  if constexpr (kActivationBytes == kQ8_1Bytes) return hsum8(acc) + summs;
  return hsum8(acc);
}

}  // namespace

float q8_0(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept {
  return dot_blocks<34, kQ8_0Bytes>(w, a, n, [](const std::uint8_t* block, BlockValues& q, float&) {
    for (int i = 0; i < 32; ++i) q[i] = read_i8(block + 2 + i);
    return read_f16(block);
  });
}

float q4_0(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept {
  return dot_blocks<18, kQ8_0Bytes>(w, a, n, [](const std::uint8_t* block, BlockValues& q, float&) {
    nibbles(block + 2, q);
    for (int& v : q) v -= 8;
    return read_f16(block);
  });
}

float q4_1(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept {
  return dot_blocks<20, kQ8_1Bytes>(w, a, n,
                                    [](const std::uint8_t* block, BlockValues& q, float& m) {
                                      nibbles(block + 4, q);
                                      m = read_f16(block + 2);
                                      return read_f16(block);
                                    });
}

float q5_0(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept {
  return dot_blocks<22, kQ8_0Bytes>(w, a, n, [](const std::uint8_t* block, BlockValues& q, float&) {
    five_bits(block + 2, block + 6, q);
    for (int& v : q) v -= 16;
    return read_f16(block);
  });
}

float q5_1(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept {
  return dot_blocks<24, kQ8_1Bytes>(w, a, n,
                                    [](const std::uint8_t* block, BlockValues& q, float& m) {
                                      five_bits(block + 4, block + 8, q);
                                      m = read_f16(block + 2);
                                      return read_f16(block);
                                    });
}

}  // namespace lpx::kernels::reference::dots
