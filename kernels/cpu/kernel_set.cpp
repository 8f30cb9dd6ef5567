#include "cpu/kernel_set.hpp"

#include "cpu/cpu_features.hpp"
#include "reference/ops.hpp"
#include "reference/quantize_activations.hpp"

namespace lpx::kernels::cpu {
namespace {

bool always() noexcept { return true; }

// The reference needs no scratch.
void reference_dot_rows_f32(const reference::F32MatmulArgs& args, std::size_t row_begin,
                            std::size_t row_end, float*) noexcept {
  reference::dot_rows_f32(args, row_begin, row_end);
}

void reference_dot_rows_i16(const reference::I16MatmulArgs& args, std::size_t row_begin,
                            std::size_t row_end, void*) noexcept {
  reference::dot_rows_i16(args, row_begin, row_end);
}

constexpr KernelSet kPortable{"portable",
                              &always,
                              &reference::quantize_activations,
                              &reference::dot_rows,
                              &reference_dot_rows_f32,
                              1,
                              &reference::quantize_activations_i16,
                              &reference_dot_rows_i16,
                              &reference::rms_norm_row,
                              &reference::rope_row,
                              &reference::swiglu,
                              &reference::geglu_approx,
                              &reference::attention_scratch_floats,
                              &reference::attention_row,
                              nullptr,
                              nullptr,
                              nullptr};

}  // namespace

std::span<const KernelSet* const> kernel_sets() noexcept {
  static const KernelSet* const kSets[] = {&avx512::kKernelSet, &avx2::kKernelSet, &kPortable};
  return kSets;
}

const KernelSet* choose_kernel_set(std::string_view requested, std::string& why) noexcept {
  for (const KernelSet* set : kernel_sets()) {
    if (requested == "auto" && set->runs_here()) return set;
    if (requested == set->name) {
      if (set->runs_here()) return set;
      why = std::string("this CPU cannot run the ") + set->name + " kernels (" + cpu_features().describe() + ")";
      return nullptr;
    }
  }
  why = "no kernel set '" + std::string(requested) + "' (auto, avx512, avx2 or portable)";
  return nullptr;
}

}  // namespace lpx::kernels::cpu
