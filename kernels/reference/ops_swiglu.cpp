// SwiGLU, split as the reference engine splits it: whole groups of 8 use the vector exp
// approximation, the n % 8 tail uses the C library's expf. Callers passing several rows at once
// therefore match it only when the row length is a multiple of 8 (true of every known model).
#include "reference/ops.hpp"
#include "reference/ops_arithmetic.hpp"

namespace lpx::kernels::reference {

void swiglu(const float* gate, const float* up, float* out, std::size_t n) noexcept {
  const std::size_t whole = n - n % 8;
  for (std::size_t i = 0; i < whole; ++i) out[i] = silu_approx(gate[i]) * up[i];
  for (std::size_t i = whole; i < n; ++i) out[i] = silu_libm(gate[i]) * up[i];
}

}  // namespace lpx::kernels::reference
