#include "synth/random_blocks.hpp"

#include <algorithm>
#include <cstring>

#include "reference/half_precision.hpp"

namespace lpx::core::synth {
namespace {

using kernels::reference::f32_to_bf16;
using kernels::reference::f32_to_f16;

struct Random {  // xorshift64*: fast, and plenty for weights nobody will read
  std::uint64_t state;
  std::uint64_t next() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1Dull;
  }
  float uniform(float scale) {  // in [-scale, scale)
    return (static_cast<float>(next() >> 40) / 16777216.0f * 2.0f - 1.0f) * scale;
  }
  void bytes(std::uint8_t* out, std::size_t n) {
    for (std::size_t i = 0; i < n; i += 8) {
      const std::uint64_t r = next();
      std::memcpy(out + i, &r, std::min<std::size_t>(8, n - i));
    }
  }
};

void put_f16(std::uint8_t* p, float v) {
  const std::uint16_t h = f32_to_f16(v);
  std::memcpy(p, &h, 2);
}

constexpr float kScale = 0.05f;

}  // namespace

std::uint64_t row_bytes(lpx_tensor_type type, std::uint64_t columns) {
  switch (type) {
    case LPX_TENSOR_F32: return columns * 4;
    case LPX_TENSOR_F16:
    case LPX_TENSOR_BF16: return columns * 2;
    case LPX_TENSOR_Q8_0: return columns / 32 * 34;
    case LPX_TENSOR_Q4_0: return columns / 32 * 18;
    case LPX_TENSOR_Q4_1: return columns / 32 * 20;
    case LPX_TENSOR_Q5_0: return columns / 32 * 22;
    case LPX_TENSOR_Q4_K: return columns / 256 * 144;
    case LPX_TENSOR_Q6_K: return columns / 256 * 210;
    default: return 0;
  }
}

std::uint32_t ggml_type_id(lpx_tensor_type type) {
  switch (type) {
    case LPX_TENSOR_F32: return 0;
    case LPX_TENSOR_F16: return 1;
    case LPX_TENSOR_Q4_0: return 2;
    case LPX_TENSOR_Q4_1: return 3;
    case LPX_TENSOR_Q5_0: return 6;
    case LPX_TENSOR_Q8_0: return 8;
    case LPX_TENSOR_Q4_K: return 12;
    case LPX_TENSOR_Q6_K: return 14;
    case LPX_TENSOR_BF16: return 30;
    default: return 0xFFFFFFFFu;
  }
}

void fill_random_rows(lpx_tensor_type type, std::uint64_t columns, std::uint64_t seed,
                      std::uint64_t first_row, std::uint64_t n_rows, std::uint8_t* out) {
  const std::uint64_t bytes_per_row = row_bytes(type, columns);
  for (std::uint64_t r = 0; r < n_rows; ++r) {
    Random rng{(seed * 0x9E3779B97F4A7C15ull) ^ ((first_row + r + 1) * 0xD1B54A32D192ED03ull) ^ 1};
    std::uint8_t* row = out + r * bytes_per_row;
    switch (type) {
      case LPX_TENSOR_F32:
        for (std::uint64_t i = 0; i < columns; ++i) {
          const float v = rng.uniform(kScale);
          std::memcpy(row + i * 4, &v, 4);
        }
        break;
      case LPX_TENSOR_F16:
        for (std::uint64_t i = 0; i < columns; ++i) put_f16(row + i * 2, rng.uniform(kScale));
        break;
      case LPX_TENSOR_BF16:
        for (std::uint64_t i = 0; i < columns; ++i) {
          const std::uint16_t h = f32_to_bf16(rng.uniform(kScale));
          std::memcpy(row + i * 2, &h, 2);
        }
        break;
      case LPX_TENSOR_Q8_0:  // d, 32 x int8
        for (std::uint8_t* b = row; b < row + bytes_per_row; b += 34) {
          put_f16(b, kScale / 127);
          rng.bytes(b + 2, 32);
        }
        break;
      case LPX_TENSOR_Q4_0:  // d, 16 bytes of nibbles (value (q - 8) d)
        for (std::uint8_t* b = row; b < row + bytes_per_row; b += 18) {
          put_f16(b, kScale / 8);
          rng.bytes(b + 2, 16);
        }
        break;
      case LPX_TENSOR_Q4_1:  // d, m, 16 bytes of nibbles (value q d + m)
        for (std::uint8_t* b = row; b < row + bytes_per_row; b += 20) {
          put_f16(b, 2 * kScale / 15);
          put_f16(b + 2, -kScale);
          rng.bytes(b + 4, 16);
        }
        break;
      case LPX_TENSOR_Q5_0:  // d, 4 bytes of high bits, 16 bytes of nibbles
        for (std::uint8_t* b = row; b < row + bytes_per_row; b += 22) {
          put_f16(b, kScale / 16);
          rng.bytes(b + 2, 20);
        }
        break;
      case LPX_TENSOR_Q4_K:  // d, dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles
        for (std::uint8_t* b = row; b < row + bytes_per_row; b += 144) {
          put_f16(b, kScale / (63 * 15) * 2);
          put_f16(b + 2, kScale / 63);
          rng.bytes(b + 4, 140);
        }
        break;
      case LPX_TENSOR_Q6_K:  // 128 bytes of low nibbles, 64 of high bit pairs, 16 int8 scales, d
        for (std::uint8_t* b = row; b < row + bytes_per_row; b += 210) {
          rng.bytes(b, 208);  // any int8 scale: value d * scale * (q - 32), |q - 32| <= 32
          put_f16(b + 208, kScale / (32 * 128));
        }
        break;
      default:
        break;
    }
  }
}

}  // namespace lpx::core::synth
