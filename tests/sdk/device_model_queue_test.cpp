// lpx::DeviceModel's queued steps (ABI 2.8) through the SDK's quant-backend table, as a host
// calls them: the contract's checks (at most two queued, token ids only, previous_outputs
// naming outputs of the step queued just before, model_forward only with nothing queued) and
// the defaults, which run a step at once with the previous picks put in.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lpx/cpp/plugin.hpp"

namespace {

// Picks 1000 + the token of each output row, and keeps the tokens of every step it ran.
class EchoModel final : public lpx::DeviceModel {
 public:
  void forward(const lpx_forward_args& a) override {
    fed.emplace_back(a.tokens, a.tokens + a.n_rows);
    for (std::uint32_t o = 0; o < a.n_outputs; ++o) a.argmax[o] = 1000 + a.tokens[a.output_rows[o]];
  }
  std::vector<std::vector<std::int32_t>> fed;
};

// One step of `tokens`, every row its own sequence and an output row.
struct Step {
  explicit Step(std::vector<std::int32_t> t) : tokens(std::move(t)) {
    for (std::uint32_t r = 0; r < tokens.size(); ++r) {
      positions.push_back(0);
      rows.push_back(r);
      outputs.push_back(r);
      tables.push_back(0);
    }
    rows.push_back(static_cast<std::uint32_t>(tokens.size()));
    picks.assign(tokens.size(), -1);
    args.struct_size = sizeof(args);
    args.n_rows = static_cast<std::uint32_t>(tokens.size());
    args.tokens = tokens.data();
    args.positions = positions.data();
    args.n_sequences = args.n_rows;
    args.sequence_rows = rows.data();
    args.block_tables = tables.data();
    args.block_table_stride = 1;
    args.n_outputs = args.n_rows;
    args.output_rows = outputs.data();
    args.argmax = picks.data();
  }
  std::vector<std::int32_t> tokens, positions, tables, picks;
  std::vector<std::uint32_t> rows, outputs;
  lpx_forward_args args{};
};

class DeviceModelQueue : public ::testing::Test {
 protected:
  lpx_status_code enqueue(const lpx_forward_args& a) {
    return code(api_.model_enqueue(nullptr, raw(), &a));
  }
  lpx_status_code wait() { return code(api_.model_wait(nullptr, raw())); }
  lpx_status_code forward(const lpx_forward_args& a) {
    return code(api_.model_forward(nullptr, raw(), &a));
  }
  lpx_device_model* raw() { return reinterpret_cast<lpx_device_model*>(&model_); }
  lpx_status_code code(lpx_status* status) {
    if (status == nullptr) return LPX_OK;
    last_message_ = status->message;
    const auto c = static_cast<lpx_status_code>(status->code);
    status->release(status);
    return c;
  }
  const lpx_quant_backend_api& api_ = lpx::detail::kDeviceBackendApi;
  EchoModel model_;
  std::string last_message_;
};

TEST_F(DeviceModelQueue, DefaultsRunAtOnceWithThePreviousPicksPutIn) {
  Step first({5, 6});
  ASSERT_EQ(enqueue(first.args), LPX_OK) << last_message_;
  Step second({-1, 7, -1});
  const std::vector<std::int32_t> previous = {1, -1, 0};
  second.args.previous_outputs = previous.data();
  ASSERT_EQ(enqueue(second.args), LPX_OK) << last_message_;
  EXPECT_EQ(wait(), LPX_OK);
  EXPECT_EQ(first.picks, (std::vector<std::int32_t>{1005, 1006}));
  EXPECT_EQ(wait(), LPX_OK);
  ASSERT_EQ(model_.fed.size(), 2u);
  EXPECT_EQ(model_.fed[1], (std::vector<std::int32_t>{1006, 7, 1005}));
  EXPECT_EQ(second.picks, (std::vector<std::int32_t>{2006, 1007, 2005}));
  EXPECT_EQ(second.tokens[0], -1) << "the caller's tokens are not written";
}

TEST_F(DeviceModelQueue, TheContractIsCheckedBeforeTheModelSeesAStep) {
  Step step({5});
  EXPECT_EQ(wait(), LPX_ERR_CONFLICT) << "nothing queued";
  ASSERT_EQ(enqueue(step.args), LPX_OK);
  ASSERT_EQ(enqueue(step.args), LPX_OK);
  EXPECT_EQ(enqueue(step.args), LPX_ERR_CONFLICT) << "a third";
  EXPECT_EQ(forward(step.args), LPX_ERR_CONFLICT) << "model_forward while steps are queued";
  EXPECT_EQ(wait(), LPX_OK);
  EXPECT_EQ(wait(), LPX_OK);
  EXPECT_EQ(model_.fed.size(), 2u);

  Step logits({5});
  std::vector<float> out(4);
  logits.args.logits = out.data();
  EXPECT_EQ(enqueue(logits.args), LPX_ERR_INVALID_ARGUMENT) << "logits";
  logits.args.argmax = nullptr;
  EXPECT_EQ(enqueue(logits.args), LPX_ERR_INVALID_ARGUMENT) << "no argmax";

  Step two({5, 6});
  ASSERT_EQ(enqueue(two.args), LPX_OK);
  ASSERT_EQ(wait(), LPX_OK);
  Step behind({-1});
  const std::vector<std::int32_t> past_the_end = {2};
  behind.args.previous_outputs = past_the_end.data();
  EXPECT_EQ(enqueue(behind.args), LPX_ERR_INVALID_ARGUMENT) << "output 2 of a two-output step";
  EXPECT_NE(last_message_.find("had 2"), std::string::npos) << last_message_;

  // A model_forward between the two: previous_outputs name nothing; nor may model_forward
  // take them itself.
  ASSERT_EQ(enqueue(two.args), LPX_OK);
  ASSERT_EQ(wait(), LPX_OK);
  ASSERT_EQ(forward(step.args), LPX_OK);
  const std::vector<std::int32_t> first_output = {0};
  behind.args.previous_outputs = first_output.data();
  EXPECT_EQ(enqueue(behind.args), LPX_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(forward(behind.args), LPX_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(model_.fed.size(), 5u) << "no refused step reached the model";
}

// A host built before 2.8 passes a shorter lpx_forward_args: previous_outputs is not read.
TEST_F(DeviceModelQueue, AnOlderHostsArgumentsHaveNoPreviousOutputs) {
  Step step({5});
  const std::vector<std::int32_t> garbage = {7};
  step.args.previous_outputs = garbage.data();
  step.args.struct_size = offsetof(lpx_forward_args, previous_outputs);
  EXPECT_EQ(forward(step.args), LPX_OK) << last_message_;
  EXPECT_EQ(step.picks[0], 1005);
}

}  // namespace
