// This ISA level's entry of the kernel-set table (cpu/kernel_set.hpp): the x86/ kernels as
// compiled for LPX_X86_ISA.
#include "cpu/kernel_set.hpp"

#include "cpu/cpu_features.hpp"
#include "cpu/x86/matmul.hpp"
#include "cpu/x86/matmul_f32.hpp"
#include "cpu/x86/matmul_i16.hpp"
#include "cpu/x86/ops.hpp"
#include "cpu/x86/quantize_activations.hpp"
#include "reference/ops.hpp"

namespace lpx::kernels::LPX_X86_ISA {

static_assert(kI16ScratchRows * 72 <= kF32ScratchRows * 32 * 4, "the i16 scratch fits in the f32 one");

#if defined(__AVX512F__)
#define LPX_X86_RUNS_HERE cpu::runs_avx512_kernels
#else
#define LPX_X86_RUNS_HERE cpu::runs_avx2_kernels
#endif

constexpr cpu::KernelSet kKernelSet{LPX_X86_ISA_NAME,
                                    &LPX_X86_RUNS_HERE,
                                    &quantize_activations,
                                    &dot_rows,
                                    &dot_rows_f32,
                                    kF32ScratchRows,
                                    &quantize_activations_i16,
                                    &dot_rows_i16,
                                    &rms_norm_row,
                                    &rope_row,
                                    &swiglu,
                                    &geglu,
                                    &attention_scratch_floats,
                                    &attention_row,
                                    &attention_block_takes,
                                    &attention_block_scratch_floats,
                                    &attention_block};

#undef LPX_X86_RUNS_HERE

}  // namespace lpx::kernels::LPX_X86_ISA
