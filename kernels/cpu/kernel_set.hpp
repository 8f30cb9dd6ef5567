// The kernel libraries of the `cpu` backend and how one is chosen. Each set implements every
// kernel the backend calls with the same results, bit for bit, as reference/ (tested set by
// set); they differ in the instructions they may use, so a set runs only on CPUs that have them.
//
//   avx512    the x86/ kernels compiled for AVX-512 (F/BW/DQ/VL + VNNI): the same 256-bit code
//             with 32 vector registers and vpdpbusd for the int8 dots
//   avx2      the x86/ kernels compiled for AVX2/FMA/F16C
//   portable  the reference kernels, any CPU
//
// A NEON/SVE library would be one more set of the same table, compiled from its own folder.
//
// Thread-safety: everything here may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "lpx/kinds/quant_backend.h"
#include "reference/matmul.hpp"
#include "reference/matmul_f32.hpp"
#include "reference/matmul_i16.hpp"

namespace lpx::kernels::cpu {

struct KernelSet {
  const char* name;  // "avx512", "avx2", "portable": the `kernels` option's values
  bool (*runs_here)() noexcept;  // the CPU and OS support every instruction the set uses
  void (*quantize_activations)(std::int32_t, const float*, std::size_t, std::size_t, void*) noexcept;
  void (*dot_rows)(const reference::MatmulArgs&, std::size_t, std::size_t) noexcept;
  // f32 activations; the last argument is a per-thread scratch of f32_scratch_rows x columns floats.
  void (*dot_rows_f32)(const reference::F32MatmulArgs&, std::size_t, std::size_t, float*) noexcept;
  std::size_t f32_scratch_rows;
  // int16 activations (reference::i16_dot_type); the last argument of dot_rows_i16 is the
  // same per-thread scratch as dot_rows_f32's.
  void (*quantize_activations_i16)(std::int32_t, const float*, std::size_t, std::size_t, void*) noexcept;
  void (*dot_rows_i16)(const reference::I16MatmulArgs&, std::size_t, std::size_t, void*) noexcept;
  void (*rms_norm_row)(const float*, const float*, float*, std::size_t, float) noexcept;
  void (*rope_row)(float*, std::size_t, std::size_t, std::int32_t, const lpx_rope_params&) noexcept;
  void (*swiglu)(const float*, const float*, float*, std::size_t) noexcept;
  void (*geglu)(const float*, const float*, float*, std::size_t) noexcept;
  std::size_t (*attention_scratch_floats)(std::uint32_t) noexcept;
  void (*attention_row)(const lpx_attention_args&, std::uint32_t, std::uint32_t, std::uint32_t,
                        float*) noexcept;
  // Blocked attention of several rows (prompts); null where the set has none, and then
  // attention_row serves every call. attention_block(args, row_begin, row_end, head_begin,
  // head_end, scratch) for calls attention_block_takes.
  bool (*attention_block_takes)(const lpx_attention_args&) noexcept;
  std::size_t (*attention_block_scratch_floats)(std::uint32_t, std::uint32_t) noexcept;
  void (*attention_block)(const lpx_attention_args&, std::uint32_t, std::uint32_t, std::uint32_t,
                          std::uint32_t, float*) noexcept;
};

// (row, head) pairs one attention_block call takes at most.
inline constexpr std::size_t kAttentionBlockQueries = 16;

// Every set compiled into this build, fastest first; the last one (portable) runs anywhere.
std::span<const KernelSet* const> kernel_sets() noexcept;

// The set `requested` names ("auto": the first of kernel_sets() that runs here), or nullptr with
// `why` set when there is no such set or this CPU cannot run it.
const KernelSet* choose_kernel_set(std::string_view requested, std::string& why) noexcept;

}  // namespace lpx::kernels::cpu

// Each x86 ISA level's table, defined by its compilation of x86/kernel_set.cpp: constant data,
// so nothing compiled for that level runs before runs_here() has said it may.
namespace lpx::kernels::avx2 {
extern const cpu::KernelSet kKernelSet;
}
namespace lpx::kernels::avx512 {
extern const cpu::KernelSet kKernelSet;
}
