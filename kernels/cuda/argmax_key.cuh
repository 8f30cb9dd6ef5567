// Greedy picking as one 64-bit atomicMax: a (value, index) pair packed so that unsigned order
// is argmax_rows' order (sampling.cu). The high word orders the value (every NaN lowest, -0
// equal to +0, then -inf < ... < +inf), the low word is ~index, so among equal values the
// lowest index is the largest key. Key 0 (a NaN at index 2^32 - 1) loses to every real pair,
// so a zeroed key is the empty maximum. Private to kernels/cuda; the key functions run on the
// host too (tests/cuda/argmax_key_test.cpp holds their order to argmax_rows').
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

namespace lpx::kernels::cuda::detail {

__host__ __device__ inline unsigned long long argmax_key(float value, std::int64_t index) {
  std::uint32_t order = 0;  // NaN
  if (value == value) {     // not NaN
    std::uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    if (bits == 0x80000000u) bits = 0;  // -0 ranks as +0
    order = (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;
  }
  const auto low = ~static_cast<std::uint32_t>(index);
  return (static_cast<unsigned long long>(order) << 32) | low;
}

__host__ __device__ inline std::int32_t argmax_key_index(unsigned long long key) {
  return static_cast<std::int32_t>(~static_cast<std::uint32_t>(key));
}

#if defined(__CUDACC__)
// The token a row's key names, and the key made empty again for the next step. A key never
// raised (its product refused, filled with NaN) gives 0, as argmax_rows gives for NaNs.
__device__ __forceinline__ std::int32_t take_argmax(unsigned long long* key) {
  const unsigned long long value = *key;
  *key = 0;
  return value == 0 ? 0 : argmax_key_index(value);
}

// Raises *target to at least key; reads first, so that once a large key is in place most
// blocks skip the atomic (one address that every block of the head GEMV would otherwise hit).
__device__ __forceinline__ void raise_key(unsigned long long* target, unsigned long long key) {
  if (key > __ldcg(target)) atomicMax(target, key);
}
#endif

}  // namespace lpx::kernels::cuda::detail
