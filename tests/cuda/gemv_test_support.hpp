// Helpers of the gemv tests (gemv_test.cpp, gemv_fusion_test.cpp): random weights of every
// type gemv supports with edge cases mixed in, their reference dequantization, and device
// copies placed off alignment on request.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "../kernels/matmul_test_support.hpp"
#include "cuda/launch.hpp"
#include "gpu_test_support.hpp"
#include "lpx/kinds/tensor.h"
#include "reference/dequantize.hpp"
#include "reference/tensor_types.hpp"

namespace lpx::kernels::cuda::gemv_test {

using test::DeviceBuffer;

#define EXPECT_CUDA_OK(expr)                                      \
  do {                                                            \
    const cudaError_t lpx_cuda_status_ = (expr);                  \
    ASSERT_EQ(lpx_cuda_status_, cudaSuccess)                      \
        << #expr << ": " << cudaGetErrorString(lpx_cuda_status_); \
  } while (false)

inline constexpr lpx_tensor_type kGemvTypes[] = {LPX_TENSOR_F32,  LPX_TENSOR_F16,  LPX_TENSOR_BF16,
                                          LPX_TENSOR_Q8_0, LPX_TENSOR_Q4_0, LPX_TENSOR_Q4_1,
                                          LPX_TENSOR_Q5_0, LPX_TENSOR_Q4_K, LPX_TENSOR_Q6_K};

inline std::string type_name(std::int32_t type) { return reference::traits_of(type)->name; }
inline std::size_t block_of(std::int32_t type) { return reference::traits_of(type)->block_elements; }
inline std::size_t row_bytes_of(std::int32_t type, std::size_t columns) {
  return static_cast<std::size_t>(*reference::row_size_bytes(type, columns));
}

inline std::uint16_t get_u16(const std::uint8_t* p) {
  std::uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
inline void put_u16(std::uint8_t* p, std::uint16_t v) { std::memcpy(p, &v, 2); }

// Random weights (matmul_test_support: random quant bits, realistic positive scales) with edge
// cases mixed in: negative and subnormal scales and mins; for float types negative zeros and
// subnormals. Every value stays finite.
inline std::vector<std::uint8_t> random_weights(matmul_test::Random& random, std::int32_t type,
                                         std::size_t rows, std::size_t columns) {
  std::vector<std::uint8_t> w = random.weights(type, rows, columns);
  const reference::TensorTypeTraits* traits = reference::traits_of(type);
  if (traits->block_elements == 1) {
    const std::size_t size = traits->block_bytes;
    for (std::size_t i = 0; i < rows * columns; i += 37) {
      std::uint8_t* p = w.data() + i * size;
      const bool zero = (i / 37) % 2 == 0;
      if (size == 4) {
        const float v = zero ? -0.0f : 1e-40f;  // an f32 subnormal
        std::memcpy(p, &v, 4);
      } else {
        put_u16(p, zero ? 0x8000u : 0x0003u);  // -0, or a subnormal (f16) / tiny (bf16)
      }
    }
    return w;
  }
  const std::size_t blocks = w.size() / traits->block_bytes;
  for (std::size_t b = 0; b < blocks; ++b) {
    std::uint8_t* block = w.data() + b * traits->block_bytes;
    std::uint8_t* d = block + (type == LPX_TENSOR_Q6_K ? 208 : 0);
    const bool has_min = type == LPX_TENSOR_Q4_1 || type == LPX_TENSOR_Q4_K;
    switch (b % 5) {
      case 1: put_u16(d, static_cast<std::uint16_t>(get_u16(d) ^ 0x8000u)); break;  // negative
      case 3: put_u16(d, 0x0155u); break;                                           // subnormal
      case 4:
        if (has_min) put_u16(block + 2, 0x8123u);  // a negative subnormal min
        break;
      default: break;
    }
  }
  return w;
}

inline std::vector<float> dequantized_rows(std::int32_t type, const std::vector<std::uint8_t>& w,
                                    std::size_t rows, std::size_t columns) {
  std::vector<float> out(rows * columns);
  const std::size_t row_bytes = row_bytes_of(type, columns);
  for (std::size_t r = 0; r < rows; ++r) {
    EXPECT_EQ(reference::dequantize_row(type, w.data() + r * row_bytes, columns,
                                        out.data() + r * columns),
              reference::DequantizeStatus::ok);
  }
  return out;
}

// `bytes` uploaded `offset` bytes into a fresh device buffer (offset 2 breaks every alignment
// the fast paths need).
struct DeviceBytes {
  DeviceBuffer<std::uint8_t> buffer;
  std::size_t offset = 0;
  const void* data() const { return buffer.get() + offset; }
};
inline DeviceBytes upload_bytes(const std::vector<std::uint8_t>& bytes, std::size_t offset) {
  std::vector<std::uint8_t> host(offset, 0xA5u);
  host.insert(host.end(), bytes.begin(), bytes.end());
  return {DeviceBuffer<std::uint8_t>(host), offset};
}

inline DeviceWeight device_weight(std::int32_t type, const DeviceBytes& bytes, std::size_t rows,
                           std::size_t columns) {
  return DeviceWeight{type, bytes.data(), static_cast<std::int64_t>(rows),
                      static_cast<std::int64_t>(columns), row_bytes_of(type, columns)};
}

inline float nan_sentinel() { return std::bit_cast<float>(0xFFFFFFFFu); }

}  // namespace lpx::kernels::cuda::gemv_test
