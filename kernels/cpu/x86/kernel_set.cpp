// This ISA level's entry of the kernel-set table (cpu/kernel_set.hpp): the x86/ kernels as
// compiled for LPX_X86_ISA, with the reference's GeGLU (no vector version yet: Gemma only).
#include "cpu/kernel_set.hpp"

#include "cpu/cpu_features.hpp"
#include "cpu/x86/matmul.hpp"
#include "cpu/x86/matmul_f32.hpp"
#include "cpu/x86/matmul_i16.hpp"
#include "cpu/x86/ops.hpp"
#include "cpu/x86/quantize_activations.hpp"
#include "reference/ops.hpp"

namespace lpx::kernels::LPX_X86_ISA {
namespace {

bool runs_here() noexcept {
#if defined(__AVX512F__)
  return cpu::cpu_features().has_avx512_kernels();
#else
  return cpu::cpu_features().has_avx2_kernels();
#endif
}

}  // namespace

static_assert(kI16ScratchRows * 72 <= kF32ScratchRows * 32 * 4, "the i16 scratch fits in the f32 one");

const cpu::KernelSet& kernel_set() noexcept {
  static constexpr cpu::KernelSet kSet{LPX_X86_ISA_NAME,
                                       &runs_here,
                                       &quantize_activations,
                                       &dot_rows,
                                       &dot_rows_f32,
                                       kF32ScratchRows,
                                       &quantize_activations_i16,
                                       &dot_rows_i16,
                                       &rms_norm_row,
                                       &rope_row,
                                       &swiglu,
                                       &reference::geglu,
                                       &attention_scratch_floats,
                                       &attention_row};
  return kSet;
}

}  // namespace lpx::kernels::LPX_X86_ISA
