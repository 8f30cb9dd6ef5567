// SwiGLU: groups of 8 with the vector exp approximation, the n % 8 tail with the C library's
// expf, exactly as reference::swiglu splits them.
#include "cpu/x86/ops.hpp"
#include "cpu/x86/ops_simd.hpp"
#include "reference/ops_arithmetic.hpp"

namespace lpx::kernels::LPX_X86_ISA {

void swiglu(const float* gate, const float* up, float* out, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 silu = ops_simd::silu_approx(_mm256_loadu_ps(gate + i));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(silu, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) out[i] = reference::silu_libm(gate[i]) * up[i];
}

}  // namespace lpx::kernels::LPX_X86_ISA
