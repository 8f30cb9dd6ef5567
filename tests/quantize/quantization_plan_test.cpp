// plan_quantization against llama-quantize's own choices: for the three test models and every
// type name, with and without --pure, the same tensors in the same order with the same types
// (tests/fixtures/quantize/types-*.json, from tools/make_quantize_type_fixtures.py).
#include "quantize/quantization_plan.hpp"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "engine/engine_test_support.hpp"
#include "lpx/cpp/tensor_types.hpp"
#include "model/model_file.hpp"

namespace lpx::core {
namespace {

std::string upper_type_name(std::int32_t type) {
  std::string name = tensor_type_traits(type)->name;
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

struct Case {
  const char* fixture;
  std::filesystem::path (*model)();
};

class QuantizationPlan : public ::testing::TestWithParam<Case> {};

TEST_P(QuantizationPlan, EveryTypeNameChoosesWhatLlamaQuantizeChooses) {
  const Case c = GetParam();
  if (!std::filesystem::exists(c.model())) GTEST_SKIP() << c.model() << " missing (tools/setup.sh)";
  std::ifstream in(std::filesystem::path(LPX_SOURCE_DIR) / "tests/fixtures/quantize" / c.fixture);
  std::stringstream text;
  text << in.rdbuf();
  const boost::json::object fixture = boost::json::parse(text.str()).as_object();

  test::TestHost host;
  auto file = ModelFile::open(c.model().string(), host.registry());
  ASSERT_TRUE(file) << file.error();
  std::vector<TensorToQuantize> tensors;
  for (const lpx_tensor_view& t : (*file)->tensors()) {
    tensors.push_back({t.name, static_cast<lpx_tensor_type>(t.type), {t.dims, t.dims + t.n_dims}});
  }
  const std::string arch = *(*file)->get_string("general.architecture");
  const auto layers = static_cast<std::uint32_t>(*(*file)->get_uint(arch + ".block_count"));

  const auto& expected_tensors = fixture.at("tensors").as_array();
  int checked = 0;
  for (const auto& [label, types] : fixture.at("types").as_object()) {
    const std::string name(label);
    const bool pure = name.find(" --pure") != std::string::npos;
    const auto mix = parse_quant_mix(name.substr(0, name.find(' ')));
    ASSERT_TRUE(mix) << name;
    const std::vector<PlannedTensor> plan = plan_quantization(tensors, layers, *mix, pure);
    std::istringstream expected_types{std::string(types.as_string())};
    ASSERT_EQ(plan.size(), expected_tensors.size()) << name;
    for (std::size_t i = 0; i < plan.size(); ++i) {
      const auto& e = expected_tensors[i].as_array();
      std::string expected_type;
      expected_types >> expected_type;
      const TensorToQuantize& t = tensors[plan[i].input_index];
      ASSERT_EQ(t.name, e[0].as_string()) << name << ": tensor " << i << " out of order";
      EXPECT_EQ(upper_type_name(t.type), e[2].as_string()) << t.name;
      EXPECT_EQ(upper_type_name(plan[i].type), expected_type) << name << ": " << t.name;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 28) << "14 type names, with and without --pure";
}

INSTANTIATE_TEST_SUITE_P(Models, QuantizationPlan,
                         ::testing::Values(Case{"types-smollm2.json", &test::smollm2_path},
                                           Case{"types-gemma3.json", &test::gemma3_path},
                                           Case{"types-tiny-llama.json", &test::tiny_llama_path}),
                         [](const auto& param_info) {
                           std::string n = param_info.param.fixture;
                           n = n.substr(6, n.size() - 11);
                           for (char& ch : n) if (ch == '-') ch = '_';
                           return n;
                         });

TEST(QuantMixNames, AliasesAndCaseAreLlamaQuantizes) {
  EXPECT_EQ(parse_quant_mix("Q4_K"), QuantMix::Q4_K_M);
  EXPECT_EQ(parse_quant_mix("q5_k"), QuantMix::Q5_K_M);
  EXPECT_EQ(parse_quant_mix("Q4_K_S"), QuantMix::Q4_K_S);
  EXPECT_FALSE(parse_quant_mix("Q3_K_M"));
  EXPECT_EQ(quant_mix_file_type(QuantMix::Q4_K_M), 15u);
}

}  // namespace
}  // namespace lpx::core
