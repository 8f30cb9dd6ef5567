// Device-side arithmetic shared by the kernels of kernels/cuda: the reference engine's exp
// approximation, f16 rounding with the reference's NaN bits, warp reductions, and a way for a
// void launcher to report bad arguments. Private to kernels/cuda (not part of launch.hpp).
//
// Every product or sum whose rounding must match kernels/reference goes through the _rn
// intrinsics below: they are never contracted into an fma and keep IEEE rounding even when a
// build passes --use_fast_math. The helpers are __host__ __device__ so their algorithm can be
// checked against the reference on a machine without a GPU.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>

namespace lpx::kernels::cuda::detail {

__host__ __device__ inline float mul_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
__host__ __device__ inline float add_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
__host__ __device__ inline double add_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
__host__ __device__ inline float sub_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
__host__ __device__ inline float div_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
__host__ __device__ inline float sqrt_rn(float a) {
#ifdef __CUDA_ARCH__
  return __fsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}
__host__ __device__ inline std::uint32_t float_bits(float x) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(x);
#else
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
#endif
}
__host__ __device__ inline float bits_float(std::uint32_t bits) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(bits);
#else
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
#endif
}
__host__ __device__ inline std::uint64_t double_bits(double x) {
#ifdef __CUDA_ARCH__
  return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  std::uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
#endif
}

// exp and log in double: CUDA's on the device, the C library's on the host. Neither is
// correctly rounded, so the two sides can differ in the last bit.
__host__ __device__ inline double exp_libm(double x) {
#ifdef __CUDA_ARCH__
  return ::exp(x);
#else
  return std::exp(x);
#endif
}
__host__ __device__ inline double log_libm(double x) {
#ifdef __CUDA_ARCH__
  return ::log(x);
#else
  return std::log(x);
#endif
}

// reference::exp_approx (ops_arithmetic.cpp), operation for operation, so it returns the same
// bits for every input: the exp of the reference's softmax and SiLU.
__host__ __device__ inline float exp_approx(float x) {
  constexpr float kShift = 0x1.8p23f;
  constexpr float kLog2e = 0x1.715476p+0f;
  constexpr float kLn2Hi = 0x1.62e4p-1f;
  constexpr float kLn2Lo = 0x1.7f7d1cp-20f;
  constexpr float kC1 = 0x1.ffffecp-1f;
  constexpr float kC2 = 0x1.fffdb6p-2f;
  constexpr float kC3 = 0x1.555e66p-3f;
  constexpr float kC4 = 0x1.573e2ep-5f;
  constexpr float kC5 = 0x1.0e4020p-7f;
  constexpr float kScaleLimit = 126.0f;
  constexpr float kRangeLimit = 192.0f;
  constexpr std::uint32_t kOneBits = 0x3F800000u;
  constexpr std::uint32_t kNegativeBias = 0x82000000u;
  constexpr std::uint32_t kHalfScaleBits = 0x7F000000u;

  const float z = fmaf(x, kLog2e, kShift);
  const float n = sub_rn(z, kShift);
  const float b = fmaf(-n, kLn2Lo, fmaf(-n, kLn2Hi, x));
  const std::uint32_t e = float_bits(z) << 23;
  const float k = bits_float(e + kOneBits);
  const float u = mul_rn(b, b);
  const float j = fmaf(fmaf(fmaf(kC5, b, kC4), u, fmaf(kC3, b, kC2)), u, mul_rn(kC1, b));
  if (!(fabsf(n) > kScaleLimit)) return fmaf(j, k, k);
  const std::uint32_t g = n <= 0.0f ? kNegativeBias : 0u;
  const float s1 = bits_float(g + kHalfScaleBits);
  if (fabsf(n) > kRangeLimit) return mul_rn(s1, s1);
  const float s2 = bits_float(e - g);
  return mul_rn(fmaf(s2, j, s2), s1);
}

// f32 -> IEEE binary16 bits, round to nearest even: exactly reference::f32_to_f16
// (half_precision.hpp). The hardware conversion agrees on every non-NaN input; a NaN is built
// by hand because the hardware returns one canonical NaN where the reference keeps the sign
// and top payload bits.
__host__ __device__ inline std::uint16_t f32_to_f16_bits(float x) {
  const std::uint32_t bits = float_bits(x);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) {
    return static_cast<std::uint16_t>(((bits >> 16) & 0x8000u) | 0x7E00u |
                                      ((bits >> 13) & 0x3FFu));
  }
  return __half_as_ushort(__float2half_rn(x));
}

// x rounded to f16 and back: the q operand of the reference's q.k.
__host__ __device__ inline float round_to_f16(float x) {
  return __half2float(__float2half_rn(x));
}

#ifdef __CUDACC__
__device__ inline float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, offset);
  return v;
}
__device__ inline double warp_sum(double v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, offset);
  return v;
}
__device__ inline float warp_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, offset));
  }
  return v;
}

// The launchers return void (launch.hpp): arguments they cannot handle are reported by a
// launch with an empty grid, which fails with cudaErrorInvalidConfiguration and leaves that
// error for the caller's cudaGetLastError(); it is not sticky and enqueues no work.
static __global__ void invalid_arguments_kernel() {}
inline void report_invalid_arguments(cudaStream_t stream) {
  invalid_arguments_kernel<<<dim3(0), dim3(1), 0, stream>>>();
}
#endif

}  // namespace lpx::kernels::cuda::detail
