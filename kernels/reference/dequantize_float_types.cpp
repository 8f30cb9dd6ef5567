// f32, f16 and bf16 rows: blocks of one little-endian element each.
#include "reference/block_bytes.hpp"
#include "reference/dequantize_blocks.hpp"

namespace lpx::kernels::reference::blocks {

using block_bytes::read_f32;
using block_bytes::read_u16;

void dequantize_f32(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept {
  for (std::size_t i = 0; i < n_blocks; ++i) out[i] = read_f32(blocks + 4 * i);
}

void dequantize_f16(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept {
  for (std::size_t i = 0; i < n_blocks; ++i) out[i] = f16_to_f32(read_u16(blocks + 2 * i));
}

void dequantize_bf16(const std::uint8_t* blocks, std::size_t n_blocks, float* out) noexcept {
  for (std::size_t i = 0; i < n_blocks; ++i) out[i] = bf16_to_f32(read_u16(blocks + 2 * i));
}

}  // namespace lpx::kernels::reference::blocks
