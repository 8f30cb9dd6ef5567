// Tools and tool-use conversations through the chat template (lpx_request.messages_json and
// tools_json, ABI 2.1; the template's source in lpx_engine_info, 2.2): the engine renders them exactly as Python jinja2 renders the same
// context with the model family's real template (the goldens of tests/chat_template), and a
// template that renders no tools refuses them instead of dropping them. SmolLM2's vocabulary
// has the ChatML tokens Qwen's template writes, so the default model serves both templates.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <string>

#include "engine/engine_test_support.hpp"
#include "support/test_support.hpp"

namespace lpx::test {
namespace {

const std::filesystem::path kGoldens =
    std::filesystem::path(LPX_SOURCE_DIR) / "tests/chat_template/golden/Qwen-Qwen2.5-7B-Instruct";
const std::filesystem::path kQwenTemplate =
    std::filesystem::path(LPX_SOURCE_DIR) / "../shared/templates/Qwen-Qwen2.5-7B-Instruct.jinja";

class ChatTools : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(smollm2_path())) GTEST_SKIP() << "run tools/setup.sh first";
  }
  TestHost host_;
};

lpx_request chat(const std::string& messages, const std::string* tools) {
  lpx_request r{};
  r.struct_size = sizeof(r);
  r.messages_json = messages.c_str();
  r.tools_json = tools ? tools->c_str() : nullptr;
  r.max_tokens = 4;
  r.on_done = [](void*, const lpx_request_result*) {};
  return r;
}

// Each golden's context (messages with tool calls and results, tools) rendered by the engine
// gives the tokens of jinja2's text for it.
TEST_F(ChatTools, ToolConversationsRenderAsJinja2RendersThem) {
  auto engine = host_.engine(smollm2_path(), "cpu", {"greedy"}, {}, {}, kQwenTemplate.string());
  ASSERT_NE(engine, nullptr);
  for (const char* golden : {"tools_offered", "parallel_tool_calls"}) {
    SCOPED_TRACE(golden);
    const boost::json::value spec = boost::json::parse(read_file(kGoldens / (std::string(golden) + ".json")));
    const boost::json::object& context = spec.at("context").as_object();
    ASSERT_TRUE(context.at("add_generation_prompt").as_bool());
    const std::string messages = boost::json::serialize(context.at("messages"));
    const std::string tools = boost::json::serialize(context.at("tools"));
    auto rendered = engine->prompt_tokens(chat(messages, &tools));
    ASSERT_TRUE(rendered.has_value()) << rendered.error().message;
    core::Tokenizer::EncodeOptions options;
    options.parse_special = true;
    options.add_eos = false;
    options.add_bos = false;  // Qwen's template writes no BOS and SmolLM2 adds none to it
    auto expected = engine->tokenizer().encode(read_file(kGoldens / (std::string(golden) + ".out")), options);
    ASSERT_TRUE(expected.has_value());
    EXPECT_EQ(*rendered, *expected);
  }
}

// lpx_engine_info.chat_template (ABI 2.2) is the source of the template that renders messages:
// the pipeline's override when it has one, else the model's own; an info struct of an older
// minor, which ends before the field, gets nothing written there.
TEST_F(ChatTools, EngineInfoCarriesTheTemplateSource) {
  auto overridden = host_.engine(smollm2_path(), "cpu", {"greedy"}, {}, {}, kQwenTemplate.string());
  ASSERT_NE(overridden, nullptr);
  lpx_engine_info info{};
  info.struct_size = sizeof(info);
  overridden->info(info);
  ASSERT_NE(info.chat_template, nullptr);
  EXPECT_EQ(std::string(info.chat_template), read_file(kQwenTemplate));

  auto own = host_.engine(smollm2_path());
  ASSERT_NE(own, nullptr);
  own->info(info);
  ASSERT_NE(info.chat_template, nullptr);
  EXPECT_NE(std::string(info.chat_template).find("<|im_start|>"), std::string::npos);
  EXPECT_NE(std::string(info.chat_template), read_file(kQwenTemplate));

  lpx_engine_info older{};
  older.struct_size = offsetof(lpx_engine_info, chat_template);
  older.chat_template = "untouched";
  own->info(older);
  EXPECT_STREQ(older.chat_template, "untouched");
  EXPECT_NE(older.backend, nullptr);
}

// The same plain conversation as messages_json and as messages renders the same.
TEST_F(ChatTools, MessagesJsonAndMessagesAgree) {
  auto engine = host_.engine(smollm2_path());
  ASSERT_NE(engine, nullptr);
  const lpx_chat_message plain[] = {{"system", "Be brief."}, {"user", "Hi!"}};
  lpx_request a{};
  a.struct_size = sizeof(a);
  a.messages = plain;
  a.message_count = 2;
  a.on_done = [](void*, const lpx_request_result*) {};
  const std::string json =
      R"([{"role": "system", "content": "Be brief."}, {"role": "user", "content": [{"type": "text", "text": "Hi"}, {"type": "text", "text": "!"}]}])";
  auto from_messages = engine->prompt_tokens(a);
  auto from_json = engine->prompt_tokens(chat(json, nullptr));
  ASSERT_TRUE(from_messages.has_value() && from_json.has_value());
  EXPECT_EQ(*from_messages, *from_json);
}

// SmolLM2's own template knows no tools: offering some is refused, naming the field, rather
// than answered as if there were none; malformed JSON is refused too.
TEST_F(ChatTools, ATemplateThatRendersNoToolsRefusesThem) {
  auto engine = host_.engine(smollm2_path());
  ASSERT_NE(engine, nullptr);
  const std::string messages = R"([{"role": "user", "content": "Weather in Rome?"}])";
  const std::string tools = R"([{"type": "function", "function": {"name": "get_weather"}}])";
  auto refused = engine->submit(chat(messages, &tools));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, LPX_ERR_UNSUPPORTED);
  EXPECT_EQ(refused.error().field, "tools");
  EXPECT_NE(refused.error().message.find("renders no tools"), std::string::npos) << refused.error().message;

  const std::string not_an_array = R"({"type": "function"})";
  auto bad_tools = engine->submit(chat(messages, &not_an_array));
  ASSERT_FALSE(bad_tools.has_value());
  EXPECT_EQ(bad_tools.error().field, "tools");
  auto bad_messages = engine->submit(chat(R"([{"content": "no role"}])", nullptr));
  ASSERT_FALSE(bad_messages.has_value());
  EXPECT_EQ(bad_messages.error().field, "messages");
}

}  // namespace
}  // namespace lpx::test
