// The block formats of 32 elements: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1.
//
// Layouts (byte offsets; f16 = IEEE half, little-endian):
//   Q8_0  34 B: d f16 @0, q int8[32] @2                         x[i] = q[i] * d
//   Q4_0  18 B: d f16 @0, qs[16] @2                             x[i] = d * (q[i] - 8)
//   Q4_1  20 B: d f16 @0, m f16 @2, qs[16] @4                   x[i] = d * q[i] + m
//   Q5_0  22 B: d f16 @0, qh u32 @2, qs[16] @6                  x[i] = d * (q[i] - 16)
//   Q5_1  24 B: d f16 @0, m f16 @2, qh u32 @4, qs[16] @8        x[i] = d * q[i] + m
// 4-bit values: element j (j < 16) is the low nibble of qs[j], element j + 16 its high nibble.
// Q5 types add bit i of qh as bit 4 of element i.
//
// The arithmetic is f32 and in the order of the formulas above, which is the order of the
// gguf Python reference: change one and results stop being bit-exact.
#include "reference/block_bytes.hpp"
#include "reference/dequantize_blocks.hpp"

namespace lpx::kernels::reference::blocks {
namespace {

using block_bytes::read_f16;
using block_bytes::read_i8;
using block_bytes::read_u32;

constexpr int kElements = 32;
constexpr int kHalf = kElements / 2;

// The 32 four-bit values of a block, in element order.
void unpack_nibbles(const std::uint8_t* qs, int (&q)[kElements]) noexcept {
  for (int j = 0; j < kHalf; ++j) {
    q[j] = qs[j] & 0x0F;
    q[j + kHalf] = qs[j] >> 4;
  }
}

// The five-bit values: nibbles plus bit i of qh as bit 4 of element i.
void unpack_five_bits(const std::uint8_t* qh_bytes, const std::uint8_t* qs,
                      int (&q)[kElements]) noexcept {
  unpack_nibbles(qs, q);
  const std::uint32_t qh = read_u32(qh_bytes);
  for (int i = 0; i < kElements; ++i) q[i] |= static_cast<int>((qh >> i) & 1u) << 4;
}

}  // namespace

void dequantize_q8_0(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept {
  constexpr std::size_t kBytes = 34;
  for (std::size_t b = 0; b < n_blocks; ++b, blocks += kBytes, out += kElements) {
    const float d = read_f16(blocks);
    for (int i = 0; i < kElements; ++i) out[i] = static_cast<float>(read_i8(blocks + 2 + i)) * d;
  }
}

void dequantize_q4_0(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept {
  constexpr std::size_t kBytes = 18;
  int q[kElements];
  for (std::size_t b = 0; b < n_blocks; ++b, blocks += kBytes, out += kElements) {
    const float d = read_f16(blocks);
    unpack_nibbles(blocks + 2, q);
    for (int i = 0; i < kElements; ++i) out[i] = d * static_cast<float>(q[i] - 8);
  }
}

void dequantize_q4_1(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept {
  constexpr std::size_t kBytes = 20;
  int q[kElements];
  for (std::size_t b = 0; b < n_blocks; ++b, blocks += kBytes, out += kElements) {
    const float d = read_f16(blocks);
    const float m = read_f16(blocks + 2);
    unpack_nibbles(blocks + 4, q);
    for (int i = 0; i < kElements; ++i) out[i] = d * static_cast<float>(q[i]) + m;
  }
}

void dequantize_q5_0(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept {
  constexpr std::size_t kBytes = 22;
  int q[kElements];
  for (std::size_t b = 0; b < n_blocks; ++b, blocks += kBytes, out += kElements) {
    const float d = read_f16(blocks);
    unpack_five_bits(blocks + 2, blocks + 6, q);
    for (int i = 0; i < kElements; ++i) out[i] = d * static_cast<float>(q[i] - 16);
  }
}

void dequantize_q5_1(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept {
  constexpr std::size_t kBytes = 24;
  int q[kElements];
  for (std::size_t b = 0; b < n_blocks; ++b, blocks += kBytes, out += kElements) {
    const float d = read_f16(blocks);
    const float m = read_f16(blocks + 2);
    unpack_five_bits(blocks + 4, blocks + 8, q);
    for (int i = 0; i < kElements; ++i) out[i] = d * static_cast<float>(q[i]) + m;
  }
}

}  // namespace lpx::kernels::reference::blocks
