// Grammars through the whole engine on the default model (SmolLM2-135M): the `grammar` link
// (plugins/samplers/grammar) that a request's lpx_sampling_overrides.grammar puts first in its
// chain holds every generated token to a GBNF grammar or a JSON Schema, ends generation where
// the text is complete, works beside sampling links and other requests, and refuses what it
// cannot honour by name.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine_test_support.hpp"

namespace lpx::test {
namespace {

class Grammar : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(smollm2_path())) GTEST_SKIP() << "run tools/setup.sh first";
  }
  std::unique_ptr<core::Engine> make(std::vector<std::string> chain = {"greedy"}) {
    core::EngineConfig config;
    config.context_size = 512;
    return host_.engine(smollm2_path(), "cpu", chain, config);
  }
  // A completion of `prompt` held to `grammar` (of `kind`).
  static Generation run(core::Engine& engine, const char* prompt, const std::string& grammar,
                        std::int32_t kind, std::uint32_t max_tokens = 160,
                        const lpx_sampling_overrides* base = nullptr) {
    lpx_sampling_overrides s = base ? *base : lpx_sampling_overrides{};
    s.struct_size = sizeof(s);
    s.set |= LPX_SET_GRAMMAR;
    s.grammar = grammar.c_str();
    s.grammar_kind = kind;
    lpx_request r{};
    r.prompt = prompt;
    r.max_tokens = max_tokens;
    r.sampling = &s;
    return generate(engine, r);
  }
  TestHost host_;
};

constexpr const char* kPerson = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "maxLength": 24},
    "age": {"type": "integer", "minimum": 0, "maximum": 120},
    "city": {"type": "string", "enum": ["Paris", "Rome", "Berlin"]},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 12}, "maxItems": 3}
  },
  "required": ["name", "age", "city", "tags"]
})";

// Characters, as JSON Schema's length keywords count them (code points of UTF-8 text).
std::size_t characters(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// The output against kPerson, checked field by field.
void expect_person(const std::string& text) {
  boost::system::error_code error;
  const boost::json::value value = boost::json::parse(text, error);
  ASSERT_FALSE(error) << "not JSON: " << text;
  const boost::json::object& o = value.as_object();
  ASSERT_EQ(o.size(), 4u) << text;
  ASSERT_TRUE(o.at("name").is_string()) << text;
  EXPECT_LE(characters(o.at("name").as_string()), 24u) << text;
  ASSERT_TRUE(o.at("age").is_int64()) << text;
  EXPECT_GE(o.at("age").as_int64(), 0) << text;
  EXPECT_LE(o.at("age").as_int64(), 120) << text;
  const std::string city(o.at("city").as_string());
  EXPECT_TRUE(city == "Paris" || city == "Rome" || city == "Berlin") << text;
  ASSERT_TRUE(o.at("tags").is_array()) << text;
  EXPECT_LE(o.at("tags").as_array().size(), 3u) << text;
  for (const auto& tag : o.at("tags").as_array()) {
    ASSERT_TRUE(tag.is_string()) << text;
    EXPECT_LE(characters(tag.as_string()), 12u) << text;
  }
}

TEST_F(Grammar, AGbnfGrammarHoldsTheOutputAndEndsItWhereItIsComplete) {
  auto engine = make();
  const Generation plain = generate(*engine, [] {
    lpx_request r{};
    r.prompt = "Is the sky green? Answer:";
    r.max_tokens = 12;
    return r;
  }());
  const Generation g = run(*engine, "Is the sky green? Answer:",
                           R"(root ::= " " ("yes" | "no") ", because " [a-z ]{1,40} ".")", LPX_GRAMMAR_GBNF);
  ASSERT_EQ(g.error, "");
  EXPECT_NE(g.text, plain.text) << "the grammar changed nothing";
  EXPECT_TRUE(g.text.starts_with(" yes, because ") || g.text.starts_with(" no, because ")) << g.text;
  EXPECT_TRUE(g.text.ends_with(".")) << g.text;
  EXPECT_EQ(g.finish_reason, LPX_FINISH_EOG) << "complete: only the end of generation is left";
}

TEST_F(Grammar, AJsonSchemaOutputParsesAndValidates) {
  auto engine = make();
  const Generation g = run(*engine, "Here is a person, as JSON:\n", kPerson, LPX_GRAMMAR_JSON_SCHEMA);
  ASSERT_EQ(g.error, "");
  EXPECT_EQ(g.finish_reason, LPX_FINISH_EOG) << g.text;
  expect_person(g.text);
}

// A structural tag (ABI 2.2) holds text and JSON together: a constant opening, a schema-valid
// object, a constant close, then only the end of generation.
TEST_F(Grammar, AStructuralTagHoldsTextAroundJson) {
  auto engine = make();
  const std::string tag = std::string(R"({"type": "structural_tag", "format": {"type": "tag",
      "begin": "<person>", "end": "</person>",
      "content": {"type": "json_schema", "json_schema": )") + kPerson + "}}}";
  const Generation g = run(*engine, "Here is a person:\n", tag, LPX_GRAMMAR_STRUCTURAL_TAG);
  ASSERT_EQ(g.error, "");
  EXPECT_EQ(g.finish_reason, LPX_FINISH_EOG) << g.text;
  ASSERT_TRUE(g.text.starts_with("<person>") && g.text.ends_with("</person>")) << g.text;
  expect_person(g.text.substr(8, g.text.size() - 8 - 9));
}

// Near max_tokens the link steers the JSON to close: a value the model would run on with is
// ended while the closers still fit, so the answer is whole (EOG), not cut ("length"). What
// cannot fit at all still ends with "length".
TEST_F(Grammar, JsonClosesBeforeMaxTokensWhereItCan) {
  auto engine = make();
  const std::string story = R"({"type": "object", "properties": {"title": {"type": "string"},
      "chapters": {"type": "array", "items": {"type": "string"}}}, "required": ["title", "chapters"],
      "additionalProperties": false})";
  for (std::uint32_t max_tokens : {16u, 24u, 40u}) {
    const Generation g = run(*engine, "A very long story with many chapters, as JSON:\n", story,
                             LPX_GRAMMAR_JSON_SCHEMA, max_tokens);
    ASSERT_EQ(g.error, "");
    EXPECT_EQ(g.finish_reason, LPX_FINISH_EOG) << max_tokens << ": " << g.text;
    const boost::json::value v = boost::json::parse(g.text);
    EXPECT_TRUE(v.as_object().contains("title") && v.as_object().contains("chapters")) << g.text;
  }
  const Generation cut = run(*engine, "A story as JSON:\n", story, LPX_GRAMMAR_JSON_SCHEMA, 3);
  EXPECT_EQ(cut.finish_reason, LPX_FINISH_LENGTH) << cut.text;
}

// With sampling links after it, several seeds, and two requests with different grammars batched
// together: every output still validates.
TEST_F(Grammar, HoldsUnderSamplingAndBesideOtherRequests) {
  auto engine = make({"top-k", "temperature", "dist"});
  lpx_sampling_overrides sampled{};
  sampled.set = LPX_SET_SEED | LPX_SET_TEMPERATURE;
  sampled.temperature = 1.2;
  std::vector<Generation> persons(4), answers(4);
  std::vector<std::thread> clients;
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([&, i] {
      lpx_sampling_overrides s = sampled;
      s.seed = 100 + static_cast<std::uint64_t>(i);
      persons[i] = run(*engine, "A person, as JSON:\n", kPerson, LPX_GRAMMAR_JSON_SCHEMA, 200, &s);
      answers[i] = run(*engine, "Pick a number:", R"(root ::= " " [1-9] [0-9]? "!")",
                       LPX_GRAMMAR_GBNF, 16, &s);
    });
  }
  for (auto& c : clients) c.join();
  int whole = 0;
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(persons[i].error, "");
    if (persons[i].finish_reason == LPX_FINISH_EOG) {  // else max_tokens cut a long value
      expect_person(persons[i].text);
      ++whole;
    }
    ASSERT_EQ(answers[i].error, "");
    EXPECT_EQ(answers[i].finish_reason, LPX_FINISH_EOG);
    const std::string& a = answers[i].text;
    ASSERT_GE(a.size(), 3u) << a;
    EXPECT_TRUE(a[0] == ' ' && a[1] >= '1' && a[1] <= '9' && a.back() == '!') << a;
  }
  EXPECT_GE(whole, 2) << "too few sampled persons were completed to check them";
}

TEST_F(Grammar, WhatItCannotHonourIsRefusedByName) {
  auto engine = make();
  struct Case {
    std::string grammar;
    std::int32_t kind;
    const char* says;
  } cases[] = {
      {R"({"type": "array", "items": {"type": "integer"}, "uniqueItems": true})",
       LPX_GRAMMAR_JSON_SCHEMA, "keyword 'uniqueItems' at # is not supported"},
      {R"({"type": "object", "properties": {"x": {"type": "number", "multipleOf": 0.5}}})",
       LPX_GRAMMAR_JSON_SCHEMA, "'multipleOf' at #/properties/x is supported for integers only"},
      {R"({"type": "string", "format": "credit-card"})", LPX_GRAMMAR_JSON_SCHEMA,
       "format \"credit-card\" at # is not supported"},
      {R"({"type": "object",)", LPX_GRAMMAR_JSON_SCHEMA, "not valid JSON"},
      // What the conversion would drop beside a deciding keyword, or together with another.
      {R"({"type": "object", "anyOf": [{"required": ["a"]}]})", LPX_GRAMMAR_JSON_SCHEMA,
       "keyword 'type' beside 'anyOf' at # is not supported"},
      {R"({"type": "string", "format": "email", "maxLength": 20})", LPX_GRAMMAR_JSON_SCHEMA,
       "minLength/maxLength together with 'format' at #"},
      {R"({"$ref": "https://example.com/s.json"})", LPX_GRAMMAR_JSON_SCHEMA, "only references within"},
      {R"({"type": "integer", "multipleOf": 2.5})", LPX_GRAMMAR_JSON_SCHEMA, "multipleOf 2.5E0 at #"},
      {R"({"minLength": 2})", LPX_GRAMMAR_JSON_SCHEMA, "'minLength' at # needs a 'type'"},
      {R"({"type": "integer", "multipleOf": 5, "minimum": 0})", LPX_GRAMMAR_JSON_SCHEMA,
       "multipleOf at # is supported without bounds, or with both"},
      {R"({"type": "string", "pattern": "^(?!abc)[a-z]+$"})", LPX_GRAMMAR_JSON_SCHEMA, "lookaround"},
      {R"({"type": "string", "format": "email", "pattern": "^zz"})", LPX_GRAMMAR_JSON_SCHEMA,
       "'pattern' together with 'format' at #"},
      {R"({"$ref": "#anchor"})", LPX_GRAMMAR_JSON_SCHEMA, "only references within the schema"},
      {R"({"oneOf": [{"type": "integer"}, {"type": "number"}]})", LPX_GRAMMAR_JSON_SCHEMA,
       "oneOf at # has branches that are not provably exclusive"},
      {R"({"type": "structural_tag", "format": {"type": "tag", "begin": "<a>", "end": "</a>",
           "content": {"type": "json_schema", "json_schema": {"type": "array", "uniqueItems": true}}}})",
       LPX_GRAMMAR_STRUCTURAL_TAG, "structural tag: #/format/content: keyword 'uniqueItems' at # is not supported"},
      {R"({"type": "structural_tag", "format": {"type": "frobnicate"}})", LPX_GRAMMAR_STRUCTURAL_TAG,
       "structural tag: "},
      {R"(root ::= "a" undefined_rule)", LPX_GRAMMAR_GBNF, "undefined_rule"},
      {R"(root ::= "a)", LPX_GRAMMAR_GBNF, "grammar: "},
  };
  for (const Case& c : cases) {
    lpx_sampling_overrides s{};
    s.struct_size = sizeof(s);
    s.set = LPX_SET_GRAMMAR;
    s.grammar = c.grammar.c_str();
    s.grammar_kind = c.kind;
    lpx_request r{};
    r.struct_size = sizeof(r);
    r.prompt = "Hello";
    r.max_tokens = 4;
    r.sampling = &s;
    r.on_done = [](void*, const lpx_request_result*) {};
    auto id = engine->submit(r);
    ASSERT_FALSE(id.has_value()) << c.grammar;
    EXPECT_NE(id.error().message.find(c.says), std::string::npos) << id.error().message;
    EXPECT_EQ(id.error().code, LPX_ERR_INVALID_ARGUMENT) << id.error().message;
    EXPECT_EQ(id.error().field, "grammar");
    EXPECT_EQ(id.error().message.find(".cc:"), std::string::npos) << "xgrammar's log prefix leaked";
  }
}

// What the check must not refuse: a discriminated union as pydantic writes it (oneOf with a
// discriminator, branches by $ref) and key patterns without a type.
TEST_F(Grammar, ExclusiveOneOfAndKeyPatternsAreHeld) {
  auto engine = make();
  const std::string pets = R"({"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}],
      "discriminator": {"propertyName": "kind", "mapping": {"cat": "#/$defs/Cat", "dog": "#/$defs/Dog"}},
      "$defs": {"Cat": {"type": "object", "properties": {"kind": {"const": "cat"}, "lives": {"type": "integer", "minimum": 0, "maximum": 9}}, "required": ["kind", "lives"]},
                "Dog": {"type": "object", "properties": {"kind": {"const": "dog"}, "good": {"type": "boolean"}}, "required": ["kind", "good"]}}})";
  const Generation pet = run(*engine, "A pet as JSON:\n", pets, LPX_GRAMMAR_JSON_SCHEMA);
  ASSERT_EQ(pet.error, "");
  ASSERT_EQ(pet.finish_reason, LPX_FINISH_EOG) << pet.text;
  const boost::json::object o = boost::json::parse(pet.text).as_object();
  const std::string kind(o.at("kind").as_string());
  EXPECT_TRUE(kind == "cat" ? o.contains("lives") : kind == "dog" && o.contains("good")) << pet.text;

  const std::string scores = R"({"type": "object", "propertyNames": {"pattern": "^[a-z]{2,8}$"},
      "additionalProperties": {"type": "integer", "minimum": 0, "maximum": 100}, "maxProperties": 2})";
  const Generation g = run(*engine, "Scores as JSON:\n", scores, LPX_GRAMMAR_JSON_SCHEMA);
  ASSERT_EQ(g.error, "");
}

// A request that ignores the end of generation runs to max_tokens past the grammar's end: only
// end-of-generation tokens can follow a whole text, and nothing fails.
TEST_F(Grammar, AWholeTextIsFollowedOnlyByTheEndOfGeneration) {
  auto engine = make();
  lpx_sampling_overrides s{};
  s.struct_size = sizeof(s);
  s.set = LPX_SET_GRAMMAR;
  const std::string grammar = R"(root ::= " yes.")";
  s.grammar = grammar.c_str();
  s.grammar_kind = LPX_GRAMMAR_GBNF;
  lpx_request r{};
  r.struct_size = sizeof(r);
  r.prompt = "Answer:";
  r.max_tokens = 8;
  r.flags = LPX_REQUEST_IGNORE_END_OF_GENERATION;
  r.sampling = &s;
  const Generation g = generate(*engine, r);
  ASSERT_EQ(g.error, "");
  EXPECT_EQ(g.finish_reason, LPX_FINISH_LENGTH);
  ASSERT_EQ(g.tokens.size(), 8u);
  const std::string answer = engine->tokenizer().decode(g.tokens, false).value_or("?");
  EXPECT_TRUE(answer.starts_with(" yes.")) << answer;
  for (std::size_t i = 1; i < g.tokens.size(); ++i) {
    if (engine->tokenizer().is_end_of_generation(g.tokens[i - 1])) {
      EXPECT_TRUE(engine->tokenizer().is_end_of_generation(g.tokens[i])) << "after the end, token " << i;
    }
  }
}

// A 2.0-sized sampling override cannot carry a grammar: asking for one is refused, not ignored.
TEST_F(Grammar, AGrammarBitInAnOlderOverrideIsRefused) {
  auto engine = make();
  lpx_sampling_overrides s{};
  s.struct_size = offsetof(lpx_sampling_overrides, grammar);
  s.set = LPX_SET_GRAMMAR;
  lpx_request r{};
  r.struct_size = sizeof(r);
  r.prompt = "Hello";
  r.max_tokens = 2;
  r.sampling = &s;
  r.on_done = [](void*, const lpx_request_result*) {};
  auto id = engine->submit(r);
  ASSERT_FALSE(id.has_value());
  EXPECT_EQ(id.error().field, "grammar");
  EXPECT_NE(id.error().message.find("end before the grammar fields"), std::string::npos) << id.error().message;
}

}  // namespace
}  // namespace lpx::test
