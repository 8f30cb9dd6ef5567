// Reading the little-endian fields of a quantized block. Blocks are packed byte arrays (18, 22,
// 210... bytes), so fields are unaligned and are assembled byte by byte, which also keeps the
// code independent of the host's byte order. Internal to the reference kernels.
#pragma once

#include <bit>
#include <cstdint>

#include "reference/half_precision.hpp"

namespace lpx::kernels::reference::block_bytes {

constexpr std::uint16_t read_u16(const std::uint8_t* p) noexcept {
  return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
}

constexpr std::uint32_t read_u32(const std::uint8_t* p) noexcept {
  return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) |
         (std::uint32_t{p[3]} << 24);
}

constexpr float read_f16(const std::uint8_t* p) noexcept { return f16_to_f32(read_u16(p)); }

constexpr float read_f32(const std::uint8_t* p) noexcept {
  return std::bit_cast<float>(read_u32(p));
}

constexpr std::int8_t read_i8(const std::uint8_t* p) noexcept {
  return std::bit_cast<std::int8_t>(*p);
}

}  // namespace lpx::kernels::reference::block_bytes
