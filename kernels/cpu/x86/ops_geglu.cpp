// GeGLU as reference::geglu_approx: groups of 8 with the vector GELU, the n % 8 tail with the
// scalar one (the same bits per lane).
#include "cpu/x86/ops.hpp"
#include "cpu/x86/ops_simd.hpp"
#include "reference/ops_arithmetic.hpp"

namespace lpx::kernels::LPX_X86_ISA {

void geglu(const float* gate, const float* up, float* out, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 gelu = ops_simd::gelu_approx(_mm256_loadu_ps(gate + i));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(gelu, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) out[i] = reference::gelu_approx(gate[i]) * up[i];
}

}  // namespace lpx::kernels::LPX_X86_ISA
