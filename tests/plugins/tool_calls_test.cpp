// Tool calling, unit by unit: the syntax read from a chat template, the calls read out of an
// answer, the validation of tools and tool_choice, the structural tag that holds the calls, and
// the conversation as the real templates (../shared/templates) render it.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>

#include "api_error.hpp"
#include "chat_template/chat_template.hpp"
#include "generation_request.hpp"
#include "json_fields.hpp"
#include "tool_call_parser.hpp"
#include "tool_syntax.hpp"
#include "support/test_support.hpp"

namespace lpx::openai {
namespace {

namespace json = boost::json;

constexpr std::string_view kPhi4MiniTemplate =
    "{% for message in messages %}{% if message['role'] == 'system' and 'tools' in message and "
    "message['tools'] is not none %}{{ '<|' + message['role'] + '|>' + message['content'] + '<|tool|>' + "
    "message['tools'] + '<|/tool|>' + '<|end|>' }}{% else %}{{ '<|' + message['role'] + '|>' + "
    "message['content'] + '<|end|>' }}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ "
    "'<|assistant|>' }}{% else %}{{ eos_token }}{% endif %}";

constexpr std::string_view kTools = R"([
  {"type": "function", "function": {"name": "get_weather", "description": "Current weather",
   "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
  {"type": "function", "function": {"name": "get_time", "description": "Local time",
   "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}}}}])";

constexpr std::string_view kConversation = R"([
  {"role": "system", "content": "Be brief."},
  {"role": "user", "content": "Weather in Paris?"},
  {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
   "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
  {"role": "tool", "tool_call_id": "c1", "content": "21 C"}])";

constexpr std::string_view kChooseTime = R"(, "tool_choice": {"type": "function", "function": {"name": "get_time"}})";

// The past call as Granite and Phi-4-mini write it, after <|tool_call|>.
constexpr const char* kCompactCall = R"([{"name": "get_weather", "arguments": {"city":"Paris"}})";

std::string read_template(const char* file) {
  const std::filesystem::path path = std::filesystem::path(LPX_SOURCE_DIR) / "../shared/templates" / file;
  EXPECT_TRUE(std::filesystem::is_regular_file(path)) << file;
  return test::read_file(path);
}

ToolUse offered(ToolSyntax syntax) {
  ToolUse tools;
  tools.functions = {ToolFunction{"get_weather", "", nullptr, false}, ToolFunction{"get_time", "", nullptr, false}};
  tools.choice = ToolChoice::kAuto;
  tools.syntax = syntax;
  return tools;
}

// A chat body: one user message unless `messages` is given, then `fields`.
std::string chat_body(std::string_view fields, std::string_view messages = R"([{"role": "user", "content": "Hi"}])") {
  std::string body = "{\"messages\": " + std::string(messages);
  if (!fields.empty()) body.append(", ").append(fields);
  return body + "}";
}

std::string tools_field(std::string_view extra = "") {
  return "\"tools\": " + std::string(kTools) + std::string(extra);
}

GenerationRequest parse(std::string_view body, ToolSyntax syntax = ToolSyntax::kHermes,
                        Endpoint endpoint = Endpoint::kChat, bool system_role = true) {
  RequestLimits limits;
  limits.max_tokens = 1000;
  limits.tool_syntax = syntax;
  limits.system_role = system_role;
  return parse_generation_request(parse_json_object(body), endpoint, limits);
}

std::string refused_param(std::string_view body, Endpoint endpoint = Endpoint::kChat) {
  try {
    parse(body, ToolSyntax::kHermes, endpoint);
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400);
    return e.param();
  }
  ADD_FAILURE() << "accepted: " << body;
  return "";
}

// The `format` of a request's structural tag.
json::object tag_format(const GenerationRequest& r) {
  EXPECT_EQ(r.grammar_kind, LPX_GRAMMAR_STRUCTURAL_TAG);
  EXPECT_EQ(r.grammar_field, "tools");
  const json::value tag = json::parse(r.grammar);
  EXPECT_EQ(tag.at("type"), "structural_tag");
  return tag.at("format").as_object();
}

json::value parameters(std::size_t i) { return json::parse(kTools).at(i).at("function").at("parameters"); }

// Renders a request's conversation as the engine does (core/engine/request_intake.cpp): a call's
// arguments, JSON text in OpenAI's messages, become an object; tools_json becomes `tools`.
core::Expected<std::string> render(std::string_view source, const GenerationRequest& r) {
  auto chat_template = core::ChatTemplate::parse(source);
  if (!chat_template) return core::unexpected(chat_template.error());
  json::array messages = json::parse(r.messages_json).as_array();
  for (json::value& m : messages) {
    if (json::value* calls = m.as_object().if_contains("tool_calls")) {
      for (json::value& call : calls->as_array()) {
        json::value& arguments = call.as_object().at("function").as_object().at("arguments");
        arguments = json::parse(arguments.as_string());
      }
    }
  }
  json::object context{{"messages", std::move(messages)}, {"add_generation_prompt", true},
                       {"bos_token", ""}, {"eos_token", ""}};
  if (!r.tools_json.empty()) context["tools"] = json::parse(r.tools_json);
  core::ChatTemplateRenderOptions options;
  options.fixed_time = std::chrono::local_seconds(std::chrono::hours(24 * 20000));
  return chat_template->render(context, options);
}

// Whether `text` holds `what`; the text is shown when it does not.
::testing::AssertionResult contains(const std::string& text, std::string_view what) {
  if (text.find(what) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "no \"" << what << "\" in:\n" << text;
}

std::string between(const std::string& text, std::string_view open, std::string_view close) {
  const std::size_t start = text.find(open);
  if (start == std::string::npos) return "";
  const std::size_t end = text.find(close, start + open.size());
  return end == std::string::npos ? "" : text.substr(start + open.size(), end - start - open.size());
}

// Each family's template is recognised by the markers it writes.
TEST(ToolCallsSyntax, DetectedFromTheRealTemplates) {
  EXPECT_EQ(detect_tool_syntax(read_template("Qwen-Qwen2.5-7B-Instruct.jinja")), ToolSyntax::kHermes);
  EXPECT_EQ(detect_tool_syntax(read_template("meta-llama-Llama-3.2-3B-Instruct.jinja")), ToolSyntax::kLlama3Json);
  EXPECT_EQ(detect_tool_syntax(read_template("ibm-granite-granite-3.3-2B-Instruct.jinja")), ToolSyntax::kGranite);
  for (const char* file : {"HuggingFaceTB-SmolLM3-3B.jinja", "google-gemma-2-2b-it.jinja",
                           "microsoft-Phi-3.5-mini-instruct.jinja"}) {
    EXPECT_EQ(detect_tool_syntax(read_template(file)), ToolSyntax::kDescribedHermes) << file;
  }
  EXPECT_EQ(detect_tool_syntax(kPhi4MiniTemplate), ToolSyntax::kPhi4Mini);
  EXPECT_EQ(detect_tool_syntax(""), ToolSyntax::kDescribedHermes);
}

// Hermes: <tool_call> blocks anywhere; the text around them stays content; anything else is content.
TEST(ToolCallsParse, Hermes) {
  const ToolUse tools = offered(ToolSyntax::kHermes);
  const std::string weather =
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
  ParsedAnswer one = parse_tool_calls(weather, tools);
  ASSERT_EQ(one.calls.size(), 1u);
  EXPECT_EQ(one.calls[0].name, "get_weather");
  EXPECT_EQ(one.calls[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(one.content, "");

  const std::string time = R"(<tool_call>{"name": "get_time", "arguments": {"tz": "CET", "n": [1, 2]}}</tool_call>)";
  ParsedAnswer two = parse_tool_calls("Let me see. " + weather + " and " + time + " Done.", tools);
  ASSERT_EQ(two.calls.size(), 2u);
  EXPECT_EQ(two.calls[1].name, "get_time");
  EXPECT_EQ(two.calls[1].arguments, R"({"tz":"CET","n":[1,2]})");  // compact
  EXPECT_EQ(json::parse(two.calls[1].arguments), json::parse(R"({"n": [1, 2], "tz": "CET"})"));
  EXPECT_EQ(two.content, "Let me see.  and  Done.");

  // Arguments as JSON text, and "parameters" in place of "arguments".
  for (const char* answer : {R"(<tool_call>{"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}</tool_call>)",
                             R"(<tool_call>{"name": "get_weather", "parameters": {"city": "Paris"}}</tool_call>)"}) {
    ParsedAnswer p = parse_tool_calls(answer, tools);
    ASSERT_EQ(p.calls.size(), 1u) << answer;
    EXPECT_EQ(p.calls[0].arguments, R"({"city":"Paris"})");
  }
  for (const char* answer : {R"(Hi <tool_call>{"name": "get_news", "arguments": {}}</tool_call>)",
                             R"(<tool_call>{"name": "get_weather", "arguments": {"city": }}</tool_call> ok)"}) {
    ParsedAnswer p = parse_tool_calls(answer, tools);
    EXPECT_TRUE(p.calls.empty()) << answer;
    EXPECT_EQ(p.content, answer);
  }
  // A last call cut off by max_tokens stays content beside the whole one before it.
  const std::string cut = "\n<tool_call>\n{\"name\": \"get_time\", \"argu";
  ParsedAnswer partial = parse_tool_calls(weather + cut, tools);
  ASSERT_EQ(partial.calls.size(), 1u);
  EXPECT_EQ(partial.calls[0].name, "get_weather");
  EXPECT_EQ(partial.content, cut);
}

// Llama 3.x: the whole answer is calls ({"name", "parameters"}, ';'-separated) or it is content.
TEST(ToolCallsParse, Llama3Json) {
  const ToolUse tools = offered(ToolSyntax::kLlama3Json);
  const std::string call = R"({"name": "get_weather", "parameters": {"city": "Paris"}})";
  for (const std::string& answer : {call, "<|python_tag|>" + call, " " + call + "\n"}) {
    ParsedAnswer p = parse_tool_calls(answer, tools);
    ASSERT_EQ(p.calls.size(), 1u) << answer;
    EXPECT_EQ(p.calls[0].name, "get_weather");
    EXPECT_EQ(p.calls[0].arguments, R"({"city":"Paris"})");
    EXPECT_EQ(p.content, "");
  }
  ParsedAnswer two = parse_tool_calls(call + R"(; {"name": "get_time", "parameters": {"tz": "UTC"}})", tools);
  ASSERT_EQ(two.calls.size(), 2u);
  EXPECT_EQ(two.calls[1].name, "get_time");
  for (const std::string& answer : {std::string("It is sunny in Paris."), "Here you go: " + call}) {
    ParsedAnswer p = parse_tool_calls(answer, tools);
    EXPECT_TRUE(p.calls.empty()) << answer;
    EXPECT_EQ(p.content, answer);
  }
}

// Granite and Phi-4-mini: a JSON list after <|tool_call|> (or bare, when the token was dropped).
TEST(ToolCallsParse, GraniteAndPhi4MiniLists) {
  const std::string list =
      R"([{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {"tz": "UTC"}}])";
  for (const std::string& answer : {"<|tool_call|>" + list, list}) {
    ParsedAnswer p = parse_tool_calls(answer, offered(ToolSyntax::kGranite));
    ASSERT_EQ(p.calls.size(), 2u) << answer;
    EXPECT_EQ(p.calls[0].name, "get_weather");
    EXPECT_EQ(p.calls[1].name, "get_time");
    EXPECT_EQ(p.calls[1].arguments, R"({"tz":"UTC"})");
    EXPECT_EQ(p.content, "");
  }
  const std::string unknown =
      R"(<|tool_call|>[{"name": "get_weather", "arguments": {}}, {"name": "x", "arguments": {}}])";
  ParsedAnswer refused = parse_tool_calls(unknown, offered(ToolSyntax::kGranite));
  EXPECT_TRUE(refused.calls.empty());
  EXPECT_EQ(refused.content, unknown);

  ParsedAnswer phi = parse_tool_calls("<|tool_call|>" + list + "<|/tool_call|>", offered(ToolSyntax::kPhi4Mini));
  EXPECT_EQ(phi.calls.size(), 2u);
  EXPECT_EQ(phi.content, "");
}

// Exposes a mismatch: the strict-auto grammar for Granite (triggered_tags, trigger `[{"name": `,
// one list per tag) admits text before a bare list and a second list after the first, but the
// parser reads one bare list, and only at the start.
TEST(ToolCallsParse, GraniteReadsTheCallsItsTriggeredGrammarAdmits) {
  const std::string weather = R"([{"name": "get_weather", "arguments": {"city": "Paris"}}])";
  ParsedAnswer p = parse_tool_calls("Let me check. " + weather, offered(ToolSyntax::kGranite));
  EXPECT_EQ(p.calls.size(), 1u);
  EXPECT_EQ(p.content, "Let me check. ");
  const std::string time = R"([{"name": "get_time", "arguments": {}}])";
  ParsedAnswer two = parse_tool_calls(weather + time, offered(ToolSyntax::kGranite));
  EXPECT_EQ(two.calls.size(), 2u) << two.content;
}

// While streaming, content is released up to (never into) what may become a call, without the
// whitespace before it (a whole answer's content is trimmed).
TEST(ToolCallsStreaming, ContentBeforeCalls) {
  const ToolUse hermes = offered(ToolSyntax::kHermes);
  const std::string answer = "Sure. <tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>";
  const std::size_t open = answer.find('<');
  std::size_t last = 0;
  for (std::size_t n = 0; n <= answer.size(); ++n) {
    const std::size_t released = content_before_calls(std::string_view(answer).substr(0, n), hermes);
    EXPECT_GE(released, last) << n;
    EXPECT_LE(released, n) << n;
    EXPECT_LE(released, open) << n;
    last = released;
  }
  EXPECT_EQ(last, open - 1) << "the space before the call is held back";
  EXPECT_EQ(content_before_calls("Hello <tool", hermes), 5u);
  EXPECT_EQ(content_before_calls("Hello wor", hermes), 9u);
  EXPECT_EQ(content_before_calls("Hello <toolbox", hermes), 14u);

  const ToolUse llama = offered(ToolSyntax::kLlama3Json);
  EXPECT_EQ(content_before_calls("{", llama), 0u);
  EXPECT_EQ(content_before_calls("  {\"na", llama), 0u);
  EXPECT_EQ(content_before_calls("Hi", llama), 2u);
  EXPECT_EQ(content_before_calls("<|pyth", llama), 0u);

  const ToolUse granite = offered(ToolSyntax::kGranite);
  EXPECT_EQ(content_before_calls("[", granite), 0u);
  EXPECT_EQ(content_before_calls("Text <|tool_call|>[", granite), 4u);
  EXPECT_EQ(content_before_calls("Text [ {", granite), 4u);
  EXPECT_EQ(content_before_calls("Scores [1, 2]", granite), 13u);
}

// What the review of the first version found: a close tag cut by max_tokens keeps its call; a
// cut list keeps its whole calls; a bare list in any key order or spacing is read, and a list
// that is not calls stays content.
TEST(ToolCallsParse, CutOffAndLooseForms) {
  const ToolUse hermes = offered(ToolSyntax::kHermes);
  const ParsedAnswer cut_close = parse_tool_calls(
      "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n"
      "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_", hermes);
  ASSERT_EQ(cut_close.calls.size(), 2u) << cut_close.content;
  EXPECT_EQ(cut_close.calls[1].name, "get_weather");

  const ToolUse granite = offered(ToolSyntax::kGranite);
  const ParsedAnswer cut_list = parse_tool_calls(
      R"(<|tool_call|>[{"name": "get_time", "arguments": {}}, {"name": "get_weather", "argu)", granite);
  ASSERT_EQ(cut_list.calls.size(), 1u);
  EXPECT_EQ(cut_list.content, R"({"name": "get_weather", "argu)");
  const ParsedAnswer reordered =
      parse_tool_calls(R"([ {"arguments": {"city": "Oslo"}, "name": "get_weather"}])", granite);
  ASSERT_EQ(reordered.calls.size(), 1u);
  EXPECT_EQ(reordered.calls[0].arguments, R"({"city":"Oslo"})");
  const ParsedAnswer own_json = parse_tool_calls(R"(Scores: [{"a": 1}] and [1, 2].)", granite);
  EXPECT_TRUE(own_json.calls.empty());
  EXPECT_EQ(own_json.content, R"(Scores: [{"a": 1}] and [1, 2].)");
}

// An answer's message goes back as clients keep it: openai-python's parse() adds `parsed`, a
// streamed call keeps its `index`; both are read past. After described tools, the user's next
// words join the results' user turn (templates like Gemma's want turns to alternate).
TEST(ToolCallsRequest, AnswersGoBackAsClientsKeepThem) {
  const GenerationRequest r = parse(chat_body(tools_field(), R"([
      {"role": "user", "content": "Weather?"},
      {"role": "assistant", "content": null, "parsed": null, "refusal": null, "tool_calls": [{"index": 0,
       "id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
      {"role": "tool", "tool_call_id": "c1", "content": "21 C"},
      {"role": "user", "content": "And tomorrow?"}])"), ToolSyntax::kDescribedHermes);
  const json::array messages = json::parse(r.messages_json).as_array();
  ASSERT_EQ(messages.size(), 4u) << r.messages_json;  // system, user, assistant, user
  EXPECT_EQ(messages[3].at("role"), "user");
  EXPECT_EQ(messages[3].at("content"), "<tool_response>\n21 C\n</tool_response>\n\nAnd tomorrow?");
  EXPECT_FALSE(messages[2].as_object().contains("parsed"));
}

// Malformed or unsupported tool fields are a 400 naming the field.
TEST(ToolCallsRequest, RefusalsNameTheField) {
  const std::string weather = R"({"type": "function", "function": {"name": "get_weather"}})";
  EXPECT_EQ(refused_param(chat_body(R"("tools": {})")), "tools");
  EXPECT_EQ(refused_param(chat_body(R"("tools": [{"type": "retrieval"}])")), "tools");
  EXPECT_EQ(refused_param(chat_body(R"("tools": [{"type": "function", "function": {"name": "f", "foo": 1}}])")),
            "tools");
  EXPECT_EQ(refused_param(chat_body("\"tools\": [" + weather + ", " + weather + "]")), "tools");
  EXPECT_EQ(refused_param(chat_body(R"("tools": [{"type": "function", "function": {"name": "get weather"}}])")),
            "tools");
  EXPECT_EQ(refused_param(chat_body(tools_field(R"(, "tool_choice": "sometimes")"))), "tool_choice");
  std::string unknown(kChooseTime);
  unknown.replace(unknown.find("get_time"), 8, "get_news");
  EXPECT_EQ(refused_param(chat_body(tools_field(unknown))), "tool_choice");
  EXPECT_EQ(refused_param(chat_body(R"("tool_choice": "required")")), "tool_choice");
  EXPECT_EQ(refused_param(chat_body(R"("functions": [{"name": "get_weather"}])")), "functions");
  EXPECT_EQ(refused_param(R"({"prompt": "a", "tools": [{"type": "function", "function": {"name": "f"}}]})",
                          Endpoint::kCompletions),
            "tools");
}

// Valid tools and every tool_choice are read into ToolUse.
TEST(ToolCallsRequest, AcceptedChoices) {
  EXPECT_EQ(parse(chat_body(tools_field())).tools.choice, ToolChoice::kAuto);  // tools alone: auto
  EXPECT_EQ(parse(chat_body(tools_field(R"(, "tool_choice": "auto")"))).tools.choice, ToolChoice::kAuto);
  EXPECT_EQ(parse(chat_body(tools_field(R"(, "tool_choice": "none")"))).tools.choice, ToolChoice::kNone);
  EXPECT_EQ(parse(chat_body(tools_field(R"(, "tool_choice": "required")"))).tools.choice, ToolChoice::kRequired);
  const GenerationRequest named = parse(chat_body(tools_field(kChooseTime)));
  EXPECT_EQ(named.tools.choice, ToolChoice::kNamed);
  EXPECT_EQ(named.tools.named, "get_time");
  ASSERT_EQ(named.tools.functions.size(), 2u);
  EXPECT_EQ(named.tools.functions[0].description, "Current weather");
  EXPECT_EQ(named.tools.functions[0].parameters, parameters(0));
  EXPECT_TRUE(named.tools.parallel);
  EXPECT_FALSE(parse(chat_body(tools_field(R"(, "parallel_tool_calls": false)"))).tools.parallel);
}

// Required calls: one tag per function, in Hermes form, arguments held to its schema.
TEST(ToolCallsGrammar, RequiredCallsAreTagsWithSeparator) {
  const json::object format = tag_format(parse(chat_body(tools_field(R"(, "tool_choice": "required")"))));
  EXPECT_EQ(format.at("type"), "tags_with_separator");
  EXPECT_EQ(format.at("at_least_one"), true);
  EXPECT_EQ(format.at("stop_after_first"), false);
  const json::array& tags = format.at("tags").as_array();
  ASSERT_EQ(tags.size(), 2u);
  const char* names[] = {"get_weather", "get_time"};
  for (std::size_t i = 0; i < 2; ++i) {
    const std::string begin(tags[i].at("begin").as_string());
    EXPECT_EQ(begin.rfind("<tool_call>\n{\"name\": \"" + std::string(names[i]) + "\"", 0), 0u) << begin;
    EXPECT_EQ(tags[i].at("content").at("type"), "json_schema");
    EXPECT_EQ(tags[i].at("content").at("json_schema"), parameters(i));
  }
  const json::object single =
      tag_format(parse(chat_body(tools_field(R"(, "tool_choice": "required", "parallel_tool_calls": false)"))));
  EXPECT_EQ(single.at("stop_after_first"), true);
  const json::object named = tag_format(parse(chat_body(tools_field(kChooseTime))));
  EXPECT_EQ(named.at("stop_after_first"), true);
  ASSERT_EQ(named.at("tags").as_array().size(), 1u);
  const std::string begin(named.at("tags").at(0).at("begin").as_string());
  EXPECT_EQ(begin.rfind("<tool_call>\n{\"name\": \"get_time\"", 0), 0u) << begin;
  EXPECT_EQ(named.at("tags").at(0).at("content").at("json_schema"), parameters(1));

  const json::object granite =
      tag_format(parse(chat_body(tools_field(R"(, "tool_choice": "required")")), ToolSyntax::kGranite));
  EXPECT_EQ(granite.at("type"), "sequence");
  EXPECT_EQ(granite.at("elements").at(0), json::parse(R"({"type": "const_string", "value": "["})"));
  EXPECT_EQ(granite.at("elements").at(2), json::parse(R"({"type": "const_string", "value": "]"})"));
}

// Optional calls get a grammar only when a function is strict or the content has its own format.
TEST(ToolCallsGrammar, AutoAndNone) {
  const GenerationRequest plain = parse(chat_body(tools_field(R"(, "tool_choice": "auto")")));
  EXPECT_EQ(plain.grammar_kind, 0);
  EXPECT_EQ(plain.grammar, "");
  EXPECT_FALSE(plain.tools_json.empty());

  const GenerationRequest strict = parse(chat_body(
      R"("tools": [{"type": "function", "function": {"name": "get_weather", "strict": true, )"
      R"("parameters": {"type": "object"}}}])"));
  const json::object triggered = tag_format(strict);
  EXPECT_EQ(triggered.at("type"), "triggered_tags");
  EXPECT_EQ(triggered.at("triggers"), json::parse(R"(["<tool_call>"])"));

  const std::string schema = R"({"type": "object", "properties": {"answer": {"type": "string"}}})";
  const json::object either = tag_format(parse(chat_body(tools_field(
      R"(, "response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": )" + schema + "}}"))));
  EXPECT_EQ(either.at("type"), "or");
  EXPECT_EQ(either.at("elements").at(0),
            json::parse(R"({"type": "json_schema", "json_schema": )" + schema + R"(, "max_whitespace_cnt": 1})"));

  // One call at most without parallel calls, and always in Llama 3's syntax (its template
  // renders one per turn): free text under a triggered grammar that stops after the first.
  const json::object single = tag_format(parse(chat_body(tools_field(R"(, "parallel_tool_calls": false)"))));
  EXPECT_EQ(single.at("type"), "triggered_tags");
  EXPECT_EQ(single.at("stop_after_first"), true);
  const json::object llama = tag_format(parse(chat_body(tools_field("")), ToolSyntax::kLlama3Json));
  EXPECT_EQ(llama.at("type"), "triggered_tags");
  EXPECT_EQ(llama.at("stop_after_first"), true);

  // Arguments are an object even where the schema says nothing.
  const json::object empty = tag_format(parse(chat_body(
      R"("tool_choice": "required", "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}])")));
  EXPECT_EQ(empty.at("tags").at(0).at("content").at("json_schema"), json::parse(R"({"type": "object"})"));

  const GenerationRequest none = parse(chat_body(tools_field(R"(, "tool_choice": "none")")));
  EXPECT_EQ(none.grammar_kind, 0);
  EXPECT_TRUE(none.tools_json.empty());
}

GenerationRequest conversation(ToolSyntax syntax, std::string_view messages = kConversation,
                               bool system_role = true) {
  return parse(chat_body(tools_field(R"(, "tool_choice": "auto")"), messages), syntax, Endpoint::kChat, system_role);
}

// Qwen2.5's template renders the tools, the past call and its result itself.
TEST(ToolCallsConversation, QwenRendersToolsAndHistory) {
  const GenerationRequest r = conversation(ToolSyntax::kHermes);
  ASSERT_FALSE(r.tools_json.empty());
  auto text = render(read_template("Qwen-Qwen2.5-7B-Instruct.jinja"), r);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_TRUE(contains(between(*text, "<tools>\n", "\n</tools>"), R"("name": "get_weather")")) << *text;
  EXPECT_TRUE(contains(*text, "Be brief.\n\n# Tools"));
  EXPECT_TRUE(
      contains(*text, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"));
  EXPECT_TRUE(contains(*text, "<|im_start|>user\n<tool_response>\n21 C\n</tool_response><|im_end|>"));
}

// A template without tools (SmolLM3 unsloth): described in the system message, history as Hermes text.
TEST(ToolCallsConversation, DescribedHermesWithSmolLM3) {
  const GenerationRequest r = conversation(ToolSyntax::kDescribedHermes);
  EXPECT_TRUE(r.tools_json.empty());
  auto text = render(read_template("HuggingFaceTB-SmolLM3-3B.jinja"), r);
  ASSERT_TRUE(text) << text.error().message;
  // One tool definition per line inside <tools>, as OpenAI gave it.
  const std::string listed = between(*text, "<tools>\n", "\n</tools>");
  const std::size_t newline = listed.find('\n');
  ASSERT_NE(newline, std::string::npos) << *text;
  EXPECT_EQ(json::parse(listed.substr(0, newline)), json::parse(kTools).at(0));
  EXPECT_EQ(json::parse(listed.substr(newline + 1)), json::parse(kTools).at(1));
  EXPECT_TRUE(contains(*text, "Be brief.\n\nYou can call functions"));
  const std::string call = between(*text, "<|im_start|>assistant\n<tool_call>\n", "\n</tool_call><|im_end|>");
  EXPECT_EQ(json::parse(call), json::parse(R"({"name": "get_weather", "arguments": {"city": "Paris"}})")) << *text;
  EXPECT_TRUE(contains(*text, "<|im_start|>user\n<tool_response>\n21 C\n</tool_response><|im_end|>"));
}

// Gemma-2 knows neither tools nor a system role: the description opens the first user message
// (a system message, which its template refuses, is used only where one is taken), and
// consecutive results become one user message.
TEST(ToolCallsConversation, DescribedHermesWithGemma2) {
  const std::string gemma2 = read_template("google-gemma-2-2b-it.jinja");
  ASSERT_FALSE(template_takes_system_role(gemma2));
  EXPECT_TRUE(template_takes_system_role(read_template("HuggingFaceTB-SmolLM3-3B.jinja")));
  const GenerationRequest r = conversation(ToolSyntax::kDescribedHermes, R"([
    {"role": "user", "content": "Weather and time in Paris?"},
    {"role": "assistant", "content": "Checking.", "tool_calls": [
      {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
      {"id": "c2", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "21 C"},
    {"role": "tool", "tool_call_id": "c2", "content": "10:00"}])", /*system_role=*/false);
  EXPECT_TRUE(r.tools_json.empty());
  const json::array messages = json::parse(r.messages_json).as_array();
  ASSERT_EQ(messages.size(), 3u) << r.messages_json;
  EXPECT_EQ(messages[0].at("role"), "user");
  const std::string first(messages[0].at("content").as_string());
  EXPECT_TRUE(contains(first, "<tools>\n{\"type\":\"function\""));
  EXPECT_TRUE(first.ends_with("tags.\n\nWeather and time in Paris?")) << first;
  EXPECT_EQ(messages[1].at("role"), "assistant");
  EXPECT_FALSE(messages[1].as_object().contains("tool_calls"));
  const std::string assistant(messages[1].at("content").as_string());
  EXPECT_EQ(assistant.rfind("Checking.\n<tool_call>\n", 0), 0u) << assistant;
  EXPECT_EQ(json::parse(between(assistant, "<tool_call>\n", "\n</tool_call>")),
            json::parse(R"({"name": "get_weather", "arguments": {"city": "Paris"}})"));
  EXPECT_EQ(messages[2], json::parse(R"({"role": "user", "content":
      "<tool_response>\n21 C\n</tool_response>\n<tool_response>\n10:00\n</tool_response>"})"));
  auto text = render(gemma2, r);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_TRUE(contains(*text, "<start_of_turn>user\nYou can call functions")) << *text;
}

// Granite 3.3: tools in its available_tools turn, calls and results written into the messages.
TEST(ToolCallsConversation, Granite) {
  const GenerationRequest r = conversation(ToolSyntax::kGranite);
  auto text = render(read_template("ibm-granite-granite-3.3-2B-Instruct.jinja"), r);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_TRUE(contains(*text, "<|start_of_role|>available_tools<|end_of_role|>"));
  EXPECT_TRUE(contains(between(*text, "available_tools<|end_of_role|>", "<|end_of_text|>"), "\"name\": \"get_time\""))
      << *text;
  EXPECT_TRUE(contains(*text, std::string("<|start_of_role|>assistant<|end_of_role|><|tool_call|>") + kCompactCall +
                                  "]<|end_of_text|>"));
  EXPECT_TRUE(contains(*text, "<|start_of_role|>tool_response<|end_of_role|>21 C<|end_of_text|>"));
}

// Llama 3.2 renders the definitions, the call as {"name", "parameters"} and the result as ipython.
TEST(ToolCallsConversation, Llama32) {
  const GenerationRequest r = conversation(ToolSyntax::kLlama3Json);
  auto text = render(read_template("meta-llama-Llama-3.2-3B-Instruct.jinja"), r);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_TRUE(contains(*text, "\"name\": \"get_weather\",\n        \"description\": \"Current weather\""));
  EXPECT_TRUE(contains(*text, "assistant<|end_header_id|>\n\n"
                              R"({"name": "get_weather", "parameters": {"city": "Paris"}}<|eot_id|>)"));
  EXPECT_TRUE(contains(*text, "<|start_header_id|>ipython<|end_header_id|>\n\n"));
  EXPECT_TRUE(contains(between(*text, "ipython<|end_header_id|>", "<|eot_id|>"), "21 C")) << *text;
}

// Phi-4-mini: the functions ride in the system message's `tools` string; calls as a tagged list.
TEST(ToolCallsConversation, Phi4Mini) {
  const GenerationRequest r = conversation(ToolSyntax::kPhi4Mini);
  EXPECT_TRUE(r.tools_json.empty());
  auto text = render(kPhi4MiniTemplate, r);
  ASSERT_TRUE(text) << text.error().message;
  json::array functions;
  const json::value tools = json::parse(kTools);
  for (const json::value& tool : tools.as_array()) functions.push_back(tool.at("function"));
  EXPECT_EQ(text->rfind("<|system|>Be brief.<|tool|>[{", 0), 0u) << *text;
  EXPECT_EQ(json::parse(between(*text, "<|system|>Be brief.<|tool|>", "<|/tool|><|end|>")), functions) << *text;
  EXPECT_TRUE(contains(*text, std::string("<|assistant|><|tool_call|>") + kCompactCall + "]<|/tool_call|><|end|>"));
}

}  // namespace
}  // namespace lpx::openai
