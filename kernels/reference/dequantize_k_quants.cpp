// The "K" block formats of 256 elements: Q4_K, Q5_K, Q6_K, Q8_K.
//
// Layouts (byte offsets; f16 = IEEE half, little-endian):
//   Q4_K  144 B: d f16 @0, dmin f16 @2, scales[12] @4, qs[128] @16
//   Q5_K  176 B: d f16 @0, dmin f16 @2, scales[12] @4, qh[32] @16, qs[128] @48
//   Q6_K  210 B: ql[128] @0, qh[64] @128, scales int8[16] @192, d f16 @208
//   Q8_K  292 B: d f32 @0, q int8[256] @4, bsums int16[16] @260 (sums for dot products; unused)
//
// Q4_K / Q5_K: 8 sub-blocks of 32 elements, each with a 6-bit scale sc and 6-bit min m packed
// into the 12 scale bytes; x = (d * sc) * q - (dmin * m). Q6_K: 16 sub-blocks of 16 elements
// with an int8 scale each; x = (d * scale) * (q - 32). Q8_K: x = d * q.
//
// The arithmetic is f32 and in the order of the formulas above, which is the order of the
// gguf Python reference: change one and results stop being bit-exact.
#include "reference/block_bytes.hpp"
#include "reference/dequantize_blocks.hpp"
#include "reference/k_scales.hpp"

namespace lpx::kernels::reference::blocks {
namespace {

using block_bytes::read_f16;
using block_bytes::read_f32;
using block_bytes::read_i8;

constexpr int kElements = 256;

// Q4_K and Q5_K differ only in the fifth bit, taken from qh when present. Sub-blocks come in
// pairs over 32 bytes of qs: sub-block 2p uses the low nibbles, 2p + 1 the high nibbles.
// Sub-block s takes bit s of qh[l] as bit 4 of its element l.
void dequantize_k_4_or_5_bit(const std::uint8_t* block, const std::uint8_t* qh,
                             const std::uint8_t* qs, float* out) noexcept {
  const float d = read_f16(block);
  const float dmin = read_f16(block + 2);
  const std::uint8_t* scales = block + 4;
  for (int s = 0; s < 8; ++s) {
    const KScaleAndMin sm = k_scale_and_min(scales, s);
    const float scale = d * static_cast<float>(sm.scale);
    const float offset = dmin * static_cast<float>(sm.min);
    const std::uint8_t* pair = qs + 32 * (s / 2);
    const int shift = 4 * (s % 2);
    for (int l = 0; l < 32; ++l) {
      int q = (pair[l] >> shift) & 0x0F;
      if (qh != nullptr) q |= ((qh[l] >> s) & 1) << 4;
      out[32 * s + l] = scale * static_cast<float>(q) - offset;
    }
  }
}

}  // namespace

void dequantize_q4_k(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept {
  constexpr std::size_t kBytes = 144;
  for (std::size_t b = 0; b < n_blocks; ++b, blocks += kBytes, out += kElements) {
    dequantize_k_4_or_5_bit(blocks, nullptr, blocks + 16, out);
  }
}

void dequantize_q5_k(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept {
  constexpr std::size_t kBytes = 176;
  for (std::size_t b = 0; b < n_blocks; ++b, blocks += kBytes, out += kElements) {
    dequantize_k_4_or_5_bit(blocks, blocks + 16, blocks + 48, out);
  }
}

// Q6_K: each half of the block (128 elements) uses 64 bytes of ql and 32 of qh. Within a half,
// element w takes its low 4 bits from ql[w % 64] (low nibble for w < 64, high nibble after)
// and its top 2 bits from qh[w % 32], bits 2 * (w / 32) and up.
void dequantize_q6_k(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept {
  constexpr std::size_t kBytes = 210;
  for (std::size_t b = 0; b < n_blocks; ++b, blocks += kBytes, out += kElements) {
    const std::uint8_t* scales = blocks + 192;
    const float d = read_f16(blocks + 208);
    for (int half = 0; half < 2; ++half) {
      const std::uint8_t* ql = blocks + 64 * half;
      const std::uint8_t* qh = blocks + 128 + 32 * half;
      for (int w = 0; w < 128; ++w) {
        const int element = 128 * half + w;
        const int low = (ql[w % 64] >> (4 * (w / 64))) & 0x0F;
        const int high = (qh[w % 32] >> (2 * (w / 32))) & 0x03;
        const float scale = d * static_cast<float>(read_i8(scales + element / 16));
        out[element] = scale * static_cast<float>((low | (high << 4)) - 32);
      }
    }
  }
}

void dequantize_q8_k(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept {
  constexpr std::size_t kBytes = 292;
  for (std::size_t b = 0; b < n_blocks; ++b, blocks += kBytes, out += kElements) {
    const float d = read_f32(blocks);
    for (int i = 0; i < kElements; ++i) out[i] = d * static_cast<float>(read_i8(blocks + 4 + i));
  }
}

}  // namespace lpx::kernels::reference::blocks
