#include "reference/quantize_activations.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "reference/half_precision.hpp"
#include "reference/tensor_types.hpp"

namespace lpx::kernels::reference {
namespace {

void write_u16(std::uint8_t* p, std::uint16_t v) noexcept {
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
}

void write_f32(std::uint8_t* p, float v) noexcept {
  const auto bits = std::bit_cast<std::uint32_t>(v);
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(bits >> (8 * i));
}

// x * id rounded half-to-even and narrowed to int8 the way the x86 instructions do it: a value
// outside int32 (or a NaN) converts to INT32_MIN, and the narrowing saturates.
std::int32_t round_to_int32(float v) noexcept {
  const float r = std::nearbyint(v);
  if (!(r >= -2147483648.0f && r < 2147483648.0f)) return INT32_MIN;
  return static_cast<std::int32_t>(r);
}

std::int8_t saturate_i8(std::int32_t v) noexcept {
  return static_cast<std::int8_t>(std::clamp(v, -128, 127));
}

// The q8_0 / q8_1 rounding of one 32-float block: writes q, returns d (f32) and sum(q).
struct Q8Block {
  float d;
  std::int32_t sum;
};

Q8Block quantize_q8_block(const float* x, std::uint8_t* q) noexcept {
  float amax = 0.0f;
  for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float d = amax / 127.0f;
  const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
  std::int32_t sum = 0;
  for (int i = 0; i < 32; ++i) {
    const std::int32_t v = round_to_int32(x[i] * id);
    sum += v;  // the sum is taken before narrowing, as the AVX2 kernel does
    q[i] = std::bit_cast<std::uint8_t>(saturate_i8(v));
  }
  return {d, sum};
}

void quantize_q8_0(const float* x, std::size_t n, std::uint8_t* out) noexcept {
  for (std::size_t b = 0; b < n / 32; ++b, x += 32, out += 34) {
    const Q8Block block = quantize_q8_block(x, out + 2);
    write_u16(out, f32_to_f16(block.d));
  }
}

void quantize_q8_1(const float* x, std::size_t n, std::uint8_t* out) noexcept {
  for (std::size_t b = 0; b < n / 32; ++b, x += 32, out += 36) {
    const Q8Block block = quantize_q8_block(x, out + 4);
    write_u16(out, f32_to_f16(block.d));
    write_u16(out + 2, f32_to_f16(block.d * static_cast<float>(block.sum)));
  }
}

// Round half to even by the float trick of the reference engine: adding 1.5 * 2^23 leaves the
// rounded integer in the low mantissa bits. Defined for every input, NaN included.
std::int32_t nearest_int(float v) noexcept {
  const float shifted = v + 12582912.0f;
  return static_cast<std::int32_t>(std::bit_cast<std::uint32_t>(shifted) & 0x007FFFFFu) -
         0x00400000;
}

void quantize_q8_k(const float* x, std::size_t n, std::uint8_t* out) noexcept {
  for (std::size_t b = 0; b < n / 256; ++b, x += 256, out += 292) {
    float amax = 0.0f;
    float max = 0.0f;
    for (int i = 0; i < 256; ++i) {
      const float ax = std::fabs(x[i]);
      if (ax > amax) {
        amax = ax;
        max = x[i];
      }
    }
    if (amax == 0.0f) {
      std::memset(out, 0, 292);
      continue;
    }
    const float iscale = -127.0f / max;
    auto* q = reinterpret_cast<std::int8_t*>(out + 4);
    for (int i = 0; i < 256; ++i) {
      q[i] = static_cast<std::int8_t>(std::min(127, nearest_int(iscale * x[i])));
    }
    for (int g = 0; g < 16; ++g) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) sum += q[16 * g + i];
      write_u16(out + 260 + 2 * g, static_cast<std::uint16_t>(sum));
    }
    write_f32(out, 1.0f / iscale);
  }
}

}  // namespace

std::optional<DotFormat> dot_format_of(std::int32_t weight_type) noexcept {
  const TensorTypeTraits* traits = traits_of(weight_type);
  if (traits == nullptr) return std::nullopt;
  switch (traits->type) {
    case LPX_TENSOR_F32:
      return DotFormat::f32;
    case LPX_TENSOR_F16:
      return DotFormat::f16;
    case LPX_TENSOR_BF16:
      return DotFormat::bf16;
    case LPX_TENSOR_Q8_0:
    case LPX_TENSOR_Q4_0:
    case LPX_TENSOR_Q5_0:
      return DotFormat::q8_0;
    case LPX_TENSOR_Q4_1:
    case LPX_TENSOR_Q5_1:
      return DotFormat::q8_1;
    case LPX_TENSOR_Q4_K:
    case LPX_TENSOR_Q5_K:
    case LPX_TENSOR_Q6_K:
    case LPX_TENSOR_Q8_K:
      return DotFormat::q8_k;
  }
  return std::nullopt;
}

std::size_t dot_block_elements(DotFormat format) noexcept {
  switch (format) {
    case DotFormat::f32:
    case DotFormat::f16:
    case DotFormat::bf16:
      return 1;
    case DotFormat::q8_0:
    case DotFormat::q8_1:
      return 32;
    case DotFormat::q8_k:
      return 256;
  }
  return 1;
}

std::size_t dot_block_bytes(DotFormat format) noexcept {
  switch (format) {
    case DotFormat::f32:
      return 4;
    case DotFormat::f16:
    case DotFormat::bf16:
      return 2;
    case DotFormat::q8_0:
      return 34;
    case DotFormat::q8_1:
      return 36;
    case DotFormat::q8_k:
      return 292;
  }
  return 0;
}

std::size_t activation_row_bytes(std::int32_t weight_type, std::size_t columns) noexcept {
  const std::optional<DotFormat> format = dot_format_of(weight_type);
  if (!format) return 0;
  const std::size_t block = dot_block_elements(*format);
  if (columns % block != 0) return 0;
  return columns / block * dot_block_bytes(*format);
}

void quantize_row(DotFormat format, const float* x, std::size_t n, std::uint8_t* out) noexcept {
  switch (format) {
    case DotFormat::f32:
      std::memcpy(out, x, n * sizeof(float));
      return;
    case DotFormat::f16:
      for (std::size_t i = 0; i < n; ++i) write_u16(out + 2 * i, f32_to_f16(x[i]));
      return;
    case DotFormat::bf16:
      for (std::size_t i = 0; i < n; ++i) write_u16(out + 2 * i, f32_to_bf16(x[i]));
      return;
    case DotFormat::q8_0:
      quantize_q8_0(x, n, out);
      return;
    case DotFormat::q8_1:
      quantize_q8_1(x, n, out);
      return;
    case DotFormat::q8_k:
      quantize_q8_k(x, n, out);
      return;
  }
}

void quantize_activations(std::int32_t weight_type, const float* x, std::size_t columns,
                          std::size_t batch, void* out) noexcept {
  const std::optional<DotFormat> format = dot_format_of(weight_type);
  const std::size_t row_bytes = activation_row_bytes(weight_type, columns);
  if (!format || row_bytes == 0) return;
  auto* dst = static_cast<std::uint8_t*>(out);
  for (std::size_t b = 0; b < batch; ++b) {
    quantize_row(*format, x + b * columns, columns, dst + b * row_bytes);
  }
}

}  // namespace lpx::kernels::reference
