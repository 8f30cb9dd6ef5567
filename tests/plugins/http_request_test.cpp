// The http transport's request validation, unit by unit: body parsing, typed fields, the
// OpenAI parameters and the engine requests built from them, API keys. The server end to end
// is tested in tests/http/ (Python, the real binary).
#include <gtest/gtest.h>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <string>
#include <vector>

#include "api_error.hpp"
#include "api_keys.hpp"
#include "generation_request.hpp"
#include "json_fields.hpp"
#include "websocket_protocols.hpp"

namespace lpx::openai {
namespace {

using http::ApiKeys;
using http::constant_time_equal;

GenerationRequest parse(std::string_view body, Endpoint endpoint = Endpoint::kCompletions,
                        std::uint32_t max_tokens = 1000) {
  return parse_generation_request(parse_json_object(body), endpoint, RequestLimits{max_tokens, {}});
}

// The 400 a body gets: its param, and a message that does not repeat the body.
ApiError refusal(std::string_view body, Endpoint endpoint = Endpoint::kCompletions) {
  try {
    parse(body, endpoint);
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << body;
  return ApiError(0, "", "");
}

TEST(HttpRequest, MalformedBodiesGetFixedMessages) {
  EXPECT_STREQ(refusal(R"({"prompt": "XYZZY)").what(), "the request body is not valid JSON");
  EXPECT_STREQ(refusal("{\"prompt\": \"XYZZY\xff\"}").what(), "the request body is not valid UTF-8");
  EXPECT_STREQ(refusal(R"(["XYZZY"])").what(), "the request body must be a JSON object");
  EXPECT_EQ(refusal(R"({"prompt": 1e999})").status(), 400);
  std::string deep(100, '[');
  EXPECT_EQ(refusal(deep).status(), 400);  // nesting is bounded
}

TEST(HttpRequest, WrongTypesAndRangesNameTheField) {
  EXPECT_EQ(refusal(R"({"prompt": "a", "max_tokens": "ten"})").param(), "max_tokens");
  EXPECT_EQ(refusal(R"({"prompt": "a", "max_tokens": 0})").param(), "max_tokens");
  EXPECT_EQ(refusal(R"({"prompt": "a", "max_tokens": 1001})").param(), "max_tokens");
  EXPECT_EQ(refusal(R"({"prompt": "a", "max_tokens": 18446744073709551615})").param(), "max_tokens");
  EXPECT_EQ(refusal(R"({"prompt": "a", "temperature": "hot"})").param(), "temperature");
  EXPECT_EQ(refusal(R"({"prompt": "a", "temperature": 2.5})").param(), "temperature");
  EXPECT_EQ(refusal(R"({"prompt": "a", "top_p": 0})").param(), "top_p");
  EXPECT_EQ(refusal(R"({"prompt": "a", "n": 9})").param(), "n");
  EXPECT_EQ(refusal(R"({"prompt": "a", "stop": 5})").param(), "stop");
  EXPECT_EQ(refusal(R"({"prompt": "a", "stop": ["1","2","3","4","5","6","7","8","9"]})").param(), "stop");
  EXPECT_EQ(refusal(R"({"prompt": "a", "logit_bias": {"x": 1}})").param(), "logit_bias");
  EXPECT_EQ(refusal(R"({"prompt": "a", "logit_bias": {"5": 101}})").param(), "logit_bias");
  EXPECT_EQ(refusal(R"({"prompt": "a", "logprobs": 6})").param(), "logprobs");
  EXPECT_EQ(refusal(R"({"prompt": "a", "echo": true})").param(), "echo");
  EXPECT_EQ(refusal(R"({"prompt": "a", "best_of": 2})").param(), "best_of");
  EXPECT_EQ(refusal(R"({"prompt": [-1]})").param(), "prompt");
  EXPECT_EQ(refusal(R"({"prompt": []})").param(), "prompt");
  EXPECT_EQ(refusal(R"({"messages": "hi"})", Endpoint::kChat).param(), "messages");
  EXPECT_EQ(refusal(R"({"messages": [{"role": "user"}]})", Endpoint::kChat).param(), "messages");
  EXPECT_EQ(refusal(R"({"messages": [{"role": "user", "content": "a"}], "top_logprobs": 2})",
                    Endpoint::kChat).param(),
            "logprobs");
}

TEST(HttpRequest, TextWithANulCharacterIsRefused) {
  EXPECT_EQ(refusal(R"({"prompt": "a\u0000b"})").param(), "prompt");
  EXPECT_EQ(refusal(R"({"prompt": "a", "stop": "x\u0000"})").param(), "stop");
}

TEST(HttpRequest, NullFieldsAreAbsentAndUnknownOnesAreRefusedByName) {
  const GenerationRequest r = parse(R"({"prompt": "a", "temperature": null, "user": "u1"})");
  EXPECT_EQ(r.sampling.set, 0u);
  EXPECT_EQ(r.max_tokens, 0u);  // omitted: until the model stops or the context ends
  try {
    parse(R"({"prompt": "a", "frobnicate": {"x": [1]}})");
    FAIL() << "an unknown field was accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param(), "frobnicate");
  }
  // A chat field on the completions endpoint is unknown there.
  EXPECT_THROW(parse(R"({"prompt": "a", "max_completion_tokens": 3})"), ApiError);
}

// Completion prompts read special-token texts as those tokens unless the request says not to.
TEST(HttpRequest, CompletionPromptsParseSpecialTokensUnlessTurnedOff) {
  GenerationRequest::Storage storage;
  const GenerationRequest plain = parse(R"({"prompt": "<|im_start|>user"})");
  EXPECT_NE(plain.engine_request(0, storage).flags & LPX_REQUEST_PARSE_SPECIAL, 0u);
  const GenerationRequest off = parse(R"({"prompt": "<|im_start|>user", "parse_special": false})");
  EXPECT_EQ(off.engine_request(0, storage).flags & LPX_REQUEST_PARSE_SPECIAL, 0u);
  EXPECT_THROW(parse(R"({"messages": [{"role": "user", "content": "x"}], "parse_special": false})",
                     Endpoint::kChat), ApiError);
}

// response_format and grammar become the request's grammar; tools belong to chat.
TEST(HttpRequest, StructuredOutputFieldsBecomeTheGrammar) {
  const GenerationRequest schema = parse(
      R"({"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "json_schema",
          "json_schema": {"name": "p", "strict": true, "schema": {"type": "object"}}}})",
      Endpoint::kChat);
  EXPECT_EQ(schema.grammar_kind, LPX_GRAMMAR_JSON_SCHEMA);
  EXPECT_EQ(schema.grammar, R"({"type":"object"})");
  EXPECT_EQ(schema.grammar_field, "response_format");
  GenerationRequest::Storage storage;
  const lpx_request engine = schema.engine_request(0, storage);
  ASSERT_NE(engine.sampling, nullptr);
  EXPECT_NE(engine.sampling->set & LPX_SET_GRAMMAR, 0u);
  EXPECT_STREQ(engine.sampling->grammar, R"({"type":"object"})");

  const GenerationRequest object = parse(R"({"prompt": "a", "response_format": {"type": "json_object"}})");
  EXPECT_EQ(object.grammar_kind, LPX_GRAMMAR_JSON_SCHEMA);
  EXPECT_EQ(parse(R"({"prompt": "a", "response_format": {"type": "text"}})").grammar_kind, 0);
  const GenerationRequest gbnf = parse(R"({"prompt": "a", "grammar": "root ::= \"x\""})");
  EXPECT_EQ(gbnf.grammar_kind, LPX_GRAMMAR_GBNF);
  EXPECT_EQ(gbnf.grammar, R"(root ::= "x")");

  const struct {
    const char* body;
    const char* param;
  } refused[] = {
      {R"({"prompt": "a", "response_format": {"type": "yaml"}})", "response_format"},
      {R"({"prompt": "a", "response_format": {"type": "json_schema"}})", "response_format"},
      {R"({"prompt": "a", "response_format": {"type": "json_object"}, "grammar": "root ::= \"x\""})", "grammar"},
      {R"({"prompt": "a", "tools": [{"type": "function", "function": {"name": "f"}}]})", "tools"},
      {R"({"prompt": "a", "tool_choice": "required"})", "tool_choice"},
      {R"({"prompt": "a", "store": true})", "store"},
  };
  for (const auto& c : refused) {
    try {
      parse(c.body);
      ADD_FAILURE() << c.body << " was accepted";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.param(), c.param) << c.body;
    }
  }
  EXPECT_EQ(parse(R"({"prompt": "a", "tool_choice": "none"})").grammar_kind, 0);
  EXPECT_THROW(parse(R"({"prompt": "a", "parallel_tool_calls": false})"), ApiError);
  // Message fields are checked too: malformed tool calls and results, and unknown fields.
  for (const char* body : {
           R"({"messages": [{"role": "assistant", "content": null, "tool_calls": [{"id": "c1"}]}]})",
           R"({"messages": [{"role": "assistant", "content": null, "tool_calls": [{"id": "c1",
               "type": "function", "function": {"name": "f", "arguments": "[1]"}}]}]})",
           R"({"messages": [{"role": "tool", "content": "21 C"}]})",
           R"({"messages": [{"role": "user", "content": "x", "tool_call_id": "c1"}]})",
           R"({"messages": [{"role": "user", "content": null}]})",
           R"({"messages": [{"role": "assistant", "content": "x", "refusal": "no"}]})",
           R"({"messages": [{"role": "user", "content": "x", "frobnicate": 1}]})"}) {
    try {
      parse(body, Endpoint::kChat);
      ADD_FAILURE() << body << " was accepted";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.param(), "messages") << body;
    }
  }
  EXPECT_NO_THROW(parse(R"({"messages": [{"role": "user", "content": "x", "name": "ann"}]})", Endpoint::kChat));
  // /generate answers one text without log-probabilities.
  for (const char* body : {R"({"prompt": "a", "n": 2})", R"({"prompt": "a", "logprobs": 2})",
                           R"({"prompt": "a", "messages": [{"role": "user", "content": "x"}]})"}) {
    EXPECT_THROW(parse(body, Endpoint::kGenerate), ApiError) << body;
  }
  EXPECT_NO_THROW(parse(R"({"prompt": "a", "max_tokens": 3, "temperature": 0})", Endpoint::kGenerate));
}

TEST(HttpRequest, PromptsComeAsTextTokensOrLists) {
  EXPECT_EQ(parse(R"({"prompt": "hi"})").prompts.at(0).text, "hi");
  EXPECT_EQ(parse(R"({"prompt": [1, 2, 3]})").prompts.at(0).tokens, (std::vector<std::int32_t>{1, 2, 3}));
  const GenerationRequest two = parse(R"({"prompt": ["a", [7]], "n": 3})");
  ASSERT_EQ(two.prompts.size(), 2u);
  EXPECT_EQ(two.choice_count(), 6u);
  EXPECT_EQ(parse(R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "a"},
                   {"type": "text", "text": "b"}]}]})", Endpoint::kChat).messages_json,
            R"([{"role":"user","content":"ab"}])");
}

TEST(HttpRequest, EngineRequestsCarryEveryParameterAndOneSeedPerChoice) {
  const GenerationRequest r = parse(R"({"prompt": ["p0", "p1"], "n": 2, "max_tokens": 7,
      "temperature": 0.5, "top_k": 3, "seed": 40, "stop": ["x", "y"], "logit_bias": {"11": -100},
      "logprobs": 2})");
  GenerationRequest::Storage storage;
  const lpx_request c3 = r.engine_request(3, storage);  // prompt 1, second choice
  EXPECT_STREQ(c3.prompt, "p1");
  EXPECT_EQ(c3.max_tokens, 7u);
  ASSERT_EQ(c3.stop_count, 2u);
  EXPECT_STREQ(c3.stop[1], "y");
  ASSERT_NE(c3.sampling, nullptr);
  EXPECT_EQ(c3.sampling->seed, 41u);
  EXPECT_EQ(c3.sampling->temperature, 0.5);
  EXPECT_EQ(c3.sampling->top_k, 3);
  EXPECT_EQ(c3.sampling->set, LPX_SET_TEMPERATURE | LPX_SET_TOP_K | LPX_SET_SEED);
  ASSERT_EQ(c3.sampling->logit_bias_count, 1u);
  EXPECT_EQ(c3.sampling->logit_bias_tokens[0], 11);
  EXPECT_EQ(c3.logprobs, 1);
  EXPECT_EQ(c3.top_logprobs, 2u);
  EXPECT_EQ(c3.flags, LPX_REQUEST_CONTEXT_END_IS_LENGTH | LPX_REQUEST_PARSE_SPECIAL);
  EXPECT_EQ(r.engine_request(2, storage).sampling->seed, 40u);
}

TEST(HttpApiKeys, AWebSocketKeyMayComeAsASubprotocol) {
  const ApiKeys keys({http::parse_key_line("sekrit"), http::parse_key_line("other-key")});
  EXPECT_TRUE(keys.accepts_websocket_protocols("lpx-api-key.sekrit"));
  EXPECT_TRUE(keys.accepts_websocket_protocols("lpx, lpx-api-key.other-key"));
  EXPECT_TRUE(keys.accepts_websocket_protocols("lpx,\tlpx-api-key.sekrit ,x"));
  EXPECT_FALSE(keys.accepts_websocket_protocols("lpx"));
  EXPECT_FALSE(keys.accepts_websocket_protocols(""));
  EXPECT_FALSE(keys.accepts_websocket_protocols("lpx-api-key."));
  EXPECT_FALSE(keys.accepts_websocket_protocols("lpx-api-key.sekri"));
  EXPECT_FALSE(keys.accepts_websocket_protocols("lpx-api-key.sekrit2"));
  EXPECT_FALSE(keys.accepts_websocket_protocols("sekrit"));
  EXPECT_FALSE(keys.accepts_websocket_protocols("x-lpx-api-key.sekrit"));
  EXPECT_FALSE(keys.accepts_websocket_protocols("lpx-api-key.sekrit.x"));
  EXPECT_TRUE(ApiKeys({}).accepts_websocket_protocols(""));
}

TEST(HttpWebSocketProtocols, TokensAreSplitOnCommasAndTrimmed) {
  std::vector<std::string> seen;
  const bool stopped = http::any_websocket_protocol(" a ,b,, \tc\t,d", [&](std::string_view t) {
    seen.emplace_back(t);
    return t == "c";
  });
  EXPECT_TRUE(stopped);
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_FALSE(http::any_websocket_protocol("", [](std::string_view) { return true; }));
  boost::beast::http::request<boost::beast::http::string_body> upgrade;
  EXPECT_EQ(http::offered_websocket_protocols(upgrade), "");
  upgrade.insert(boost::beast::http::field::sec_websocket_protocol, "lpx-api-key.k");
  upgrade.insert(boost::beast::http::field::sec_websocket_protocol, "lpx, chat");
  EXPECT_EQ(http::offered_websocket_protocols(upgrade), "lpx-api-key.k,lpx, chat");
  EXPECT_TRUE(http::offers_key_without_lpx("lpx-api-key.k"));
  EXPECT_TRUE(http::offers_key_without_lpx("chat, lpx-api-key.k"));
  EXPECT_FALSE(http::offers_key_without_lpx("lpx-api-key.k, lpx"));
  EXPECT_FALSE(http::offers_key_without_lpx("lpx"));
  EXPECT_FALSE(http::offers_key_without_lpx("chat"));
}

TEST(HttpApiKeys, OnlyTheExactBearerKeyIsAccepted) {
  const ApiKeys keys({http::parse_key_line("sekrit"), http::parse_key_line("other-key")});
  EXPECT_TRUE(keys.required());
  EXPECT_TRUE(keys.accepts("Bearer sekrit"));
  EXPECT_TRUE(keys.accepts("Bearer other-key"));
  EXPECT_FALSE(keys.accepts("Bearer sekri"));
  EXPECT_FALSE(keys.accepts("Bearer sekrit2"));
  EXPECT_FALSE(keys.accepts("Bearer "));
  EXPECT_FALSE(keys.accepts("sekrit"));
  EXPECT_FALSE(keys.accepts("Basic sekrit"));
  EXPECT_FALSE(keys.accepts(""));
  EXPECT_TRUE(ApiKeys({}).accepts(""));
  EXPECT_TRUE(constant_time_equal("", ""));
  EXPECT_FALSE(constant_time_equal("a", ""));
  EXPECT_FALSE(constant_time_equal("", "a"));
  EXPECT_FALSE(constant_time_equal("abc", "abcabc"));  // the cyclic walk must not fool it
}

}  // namespace
}  // namespace lpx::openai
