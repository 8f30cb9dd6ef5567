// The SIMD kernel sets of the `cpu` backend (cpu/kernel_set.hpp; every set but the portable
// one, which is the reference itself) as test parameters, alone or with a tensor type: each
// test runs once per set and skips, saying why, where this CPU cannot run the set.
#pragma once

#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "cpu/cpu_features.hpp"
#include "cpu/kernel_set.hpp"
#include "lpx/kinds/tensor.h"
#include "reference/tensor_types.hpp"

namespace lpx::kernels::test {

inline std::vector<const cpu::KernelSet*> simd_kernel_sets() {
  std::vector<const cpu::KernelSet*> sets;
  for (const cpu::KernelSet* set : cpu::kernel_sets()) {
    if (std::string_view(set->name) != "portable") sets.push_back(set);
  }
  return sets;
}

struct SetAndType {
  const cpu::KernelSet* set;
  lpx_tensor_type type;
};

inline std::vector<SetAndType> every_set_and_type(std::span<const lpx_tensor_type> types) {
  std::vector<SetAndType> all;
  for (const cpu::KernelSet* set : simd_kernel_sets()) {
    for (lpx_tensor_type type : types) all.push_back({set, type});
  }
  return all;
}

inline std::string skip_message(const cpu::KernelSet& set) {
  return std::string("this CPU cannot run the ") + set.name + " kernels (" + cpu::cpu_features().describe() + ")";
}

// The fixture of a test run per set and type: skipped, saying why, where the set cannot run.
class SetAndTypeTest : public ::testing::TestWithParam<SetAndType> {
 protected:
  void SetUp() override {
    if (!GetParam().set->runs_here()) GTEST_SKIP() << skip_message(*GetParam().set);
  }
};

// "avx512_q4_1": the instance name of a SetAndTypeTest.
inline std::string set_and_type_name(const ::testing::TestParamInfo<SetAndType>& info) {
  return std::string(info.param.set->name) + "_" + reference::traits_of(info.param.type)->name;
}

}  // namespace lpx::kernels::test

// Test names and failure messages show the set's name, not its address.
namespace lpx::kernels::cpu {
inline void PrintTo(const KernelSet* set, std::ostream* os) { *os << set->name; }
}  // namespace lpx::kernels::cpu
namespace lpx::kernels::test {
inline void PrintTo(const SetAndType& p, std::ostream* os) { *os << p.set->name << " type " << p.type; }
}  // namespace lpx::kernels::test
