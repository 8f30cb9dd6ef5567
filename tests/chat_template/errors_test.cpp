// Errors are values with the template line; hostile templates hit a budget instead of exhausting
// the stack, memory or time; nothing escapes the API as an exception.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "chat_template_test_support.hpp"

namespace lpx::test {
namespace {

using core::ChatTemplate;
using core::ChatTemplateRenderOptions;

struct ErrorCase {
  const char* name;
  const char* source;
  const char* error;  // the whole message
};

void PrintTo(const ErrorCase& test_case, std::ostream* out) { *out << test_case.name; }

std::string error_case_name(const ::testing::TestParamInfo<ErrorCase>& test) {
  return test.param.name;
}

// --- refused while parsing ----------------------------------------------------------------------

const ErrorCase kParseErrors[] = {
    {"UnsupportedFilterNamesFilterAndLine", "line one\nline two\n{{ text | wordwrap(20) }}",
     "template line 3: unsupported filter 'wordwrap'"},
    {"UnknownFilter", "{{ x|frobnicate }}", "template line 1: unknown filter 'frobnicate'"},
    {"UnknownTest", "{% if x is frobnicated %}{% endif %}",
     "template line 1: unknown test 'frobnicated'"},
    {"UnsupportedIncludeTag", "a\n{% include 'other.jinja' %}",
     "template line 2: unsupported tag 'include'"},
    {"UnsupportedExtendsTag", "{% extends 'base.jinja' %}",
     "template line 1: unsupported tag 'extends'"},
    {"UnsupportedCallTag", "{% call f() %}x{% endcall %}",
     "template line 1: unsupported tag 'call'"},
    {"DoTagIsNotEnabled", "{% do l.append(1) %}", "template line 1: unsupported tag 'do'"},
    {"UnknownTag", "{% frobnicate %}", "template line 1: unknown tag 'frobnicate'"},
    {"UnterminatedVariableTag", "a\n{{ x ",
     "template line 2: unterminated '{{' tag (missing '}}')"},
    {"UnterminatedBlockTag", "{% if x", "template line 1: unterminated '{%' tag (missing '%}')"},
    {"UnterminatedComment", "{# note", "template line 1: unterminated comment (missing '#}')"},
    {"UnterminatedRaw", "{% raw %}abc",
     "template line 1: unterminated 'raw' block (missing '{% endraw %}')"},
    {"UnterminatedString", "{{ 'abc }}", "template line 1: unterminated string literal"},
    {"UnterminatedForBlock", "{% for x in l %}\n{{ x }}\n",
     "template line 1: unterminated 'for' block (expected 'endfor' or 'else' before the end of the "
     "template)"},
    {"MismatchedEndTag", "{% if x %}\n{% endfor %}",
     "template line 2: unexpected '{% endfor %}': the 'if' block opened on line 1 expects 'elif', "
     "'else' or 'endif'"},
    {"StrayEndTag", "{% endif %}", "template line 1: unexpected '{% endif %}'"},
    {"BreakOutsideLoop", "{% break %}", "template line 1: 'break' outside of a loop"},
    {"MissingOperand", "{{ 1 + }}",
     "template line 1: unexpected end of print statement '}}', expected an expression"},
    {"UnbalancedBracket", "{{ (1 }}", "template line 1: unexpected '}', expected ')'"},
    {"StrayCharacter", "{{ 1 $ 2 }}", "template line 1: unexpected character '$' in tag"},
    {"ArgumentUnpacking", "{{ f(*l) }}",
     "template line 1: unsupported construct: '*' argument unpacking in a call"},
    {"AssignToLiteral", "{% set true = 1 %}", "template line 1: cannot assign to 'true'"},
    {"ChainedTests", "{{ x is defined is none }}", "template line 1: cannot chain tests with 'is'"},
};

class ChatTemplateParseError : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ChatTemplateParseError, IsReportedWithLine) {
  const auto parsed = ChatTemplate::parse(GetParam().source);
  ASSERT_FALSE(parsed) << "parsed: " << GetParam().source;
  EXPECT_EQ(parsed.error().message, GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(Cases, ChatTemplateParseError, ::testing::ValuesIn(kParseErrors),
                         error_case_name);

// --- raised while rendering (the messages follow Python's) ---------------------------------------

const ErrorCase kRenderErrors[] = {
    {"AttributeOfUndefined", "{{ missing.attr }}", "template line 1: 'missing' is undefined"},
    {"AttributeOfMissingKey", "ok\n{{ d.nokey.x }}",
     "template line 2: 'dict object' has no attribute 'nokey'"},
    {"CallingUndefined", "{{ nope() }}", "template line 1: 'nope' is undefined"},
    {"ArithmeticOnUndefined", "{{ 'a' + missing }}", "template line 1: 'missing' is undefined"},
    {"ConcatenateStrAndInt", "{{ 'a' + 1 }}",
     "template line 1: can only concatenate str (not \"int\") to str"},
    {"OrderingAcrossTypes", "{{ 1 < 'a' }}",
     "template line 1: '<' not supported between instances of 'int' and 'str'"},
    {"DivisionByZero", "{{ 1 / 0 }}", "template line 1: division by zero"},
    {"ModuloByZero", "{{ 7 % 0 }}", "template line 1: integer modulo by zero"},
    {"NoneArithmetic", "{{ none + 1 }}",
     "template line 1: unsupported operand type(s) for +: 'NoneType' and 'int'"},
    {"ImmutableSandbox", "{{ l.append(4) }}",
     "template line 1: access to attribute 'append' of 'list' object is unsafe."},
    {"AssignAttributeOfDict", "{% set d.x = 1 %}",
     "template line 1: cannot assign attribute on non-namespace object"},
    {"GeneratorHasNoLength", "{{ m|selectattr('role', 'equalto', 'user')|length }}",
     "template line 1: object of type 'generator' has no len()"},
    {"UndefinedIsNotJson", "{{ missing|tojson }}",
     "template line 1: Object of type Undefined is not JSON serializable"},
    {"MacroTooManyArguments", "{% macro f(a) %}{% endmacro %}{{ f(1, 2) }}",
     "template line 1: macro 'f' takes not more than 1 argument(s)"},
    {"MacroUnknownKeyword", "{% macro f(a) %}{% endmacro %}{{ f(z=2) }}",
     "template line 1: macro 'f' takes no keyword argument 'z'"},
    {"UnpackMismatch", "{% for a, b in [[1, 2, 3]] %}{% endfor %}",
     "template line 1: too many values to unpack (expected 2)"},
    {"RangeTooBig", "{{ range(100001)|length }}",
     "template line 1: Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000)."},
    {"IntegerOverflow", "{{ 2 ** 100 }}",
     "template line 1: integer overflow (the result does not fit in 64 bits; Python would use a "
     "big integer)"},
    {"NoFilterForMap", "{{ l|map('frobnicate')|list }}",
     "template line 1: No filter named 'frobnicate'."},
    {"SlicingANumber", "{% set n = 5 %}{{ n[1:] }}",
     "template line 1: 'int' object is not subscriptable"},
    {"SlicingADict", "{{ d[1:] }}", "template line 1: unhashable type: 'slice'"},
    {"IndentNeedsText", "{{ f|indent }}",
     "template line 1: unsupported operand type(s) for +=: 'float' and 'str'"},
    {"IntOfUndefined", "{{ missing|int }}", "template line 1: 'missing' is undefined"},
    {"NonRecursiveLoopCall", "{% for x in l %}{{ loop(l) }}{% endfor %}",
     "template line 1: cannot call a loop that is not declared 'recursive'"},
};

class ChatTemplateRenderError : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ChatTemplateRenderError, IsReportedWithLine) {
  EXPECT_EQ(render_or_error(GetParam().source, sample_context()),
            std::string("ERROR: ") + GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(Cases, ChatTemplateRenderError, ::testing::ValuesIn(kRenderErrors),
                         error_case_name);

// --- raise_exception ----------------------------------------------------------------------------

TEST(ChatTemplateRaiseException, ErrorIsExactlyTheMessage) {
  const auto parsed = ChatTemplate::parse(
      "{% for message in messages %}\n"
      "{% if message.role == 'system' %}{{ raise_exception('System role not supported') }}{% endif "
      "%}\n"
      "{% endfor %}");
  ASSERT_TRUE(parsed) << parsed.error();
  const auto context =
      boost::json::parse(R"({"messages": [{"role": "system", "content": "x"}]})").as_object();
  const auto rendered = parsed->render(context);
  ASSERT_FALSE(rendered);
  EXPECT_EQ(rendered.error().message, "System role not supported");
}

TEST(ChatTemplateRaiseException, NonStringMessageIsPrinted) {
  EXPECT_EQ(render_or_error("{{ raise_exception(42) }}", {}), "ERROR: 42");
}

// --- budgets ------------------------------------------------------------------------------------

TEST(ChatTemplateLimits, OutputSize) {
  ChatTemplateRenderOptions options = test_render_options();
  options.max_output_bytes = 100;
  EXPECT_EQ(render_or_error("{% for i in range(50) %}abcd{% endfor %}", {}, options),
            "ERROR: template line 1: template output exceeds the limit of 100 bytes");
  std::string exactly_at_limit;
  for (int i = 0; i < 25; ++i) exactly_at_limit += "abcd";
  EXPECT_EQ(render_or_error("{% for i in range(25) %}abcd{% endfor %}", {}, options),
            exactly_at_limit);
}

TEST(ChatTemplateLimits, LoopIterations) {
  ChatTemplateRenderOptions options = test_render_options();
  options.max_loop_iterations = 1000;
  EXPECT_EQ(
      render_or_error("{% for i in range(100) %}{% for j in range(100) %}{% endfor %}{% endfor %}",
                      {}, options),
      "ERROR: template line 1: too many loop iterations (the limit is 1000)");
}

TEST(ChatTemplateLimits, DefaultLoopBudgetStopsRunawayLoops) {
  EXPECT_EQ(
      render_or_error(
          "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", {}),
      "ERROR: template line 1: too many loop iterations (the limit is 1000000)");
}

TEST(ChatTemplateLimits, MacroRecursion) {
  EXPECT_EQ(render_or_error("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", {}),
            "ERROR: template line 1: macro calls nested too deeply (limit 64)");
}

TEST(ChatTemplateLimits, RecursiveLoopDepth) {
  // Each level re-enters the loop with the same list.
  EXPECT_EQ(render_or_error("{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}", {}),
            "ERROR: template line 1: recursive loop calls nested too deeply (limit 64)");
}

TEST(ChatTemplateLimits, NestingAcrossMacroCalls) {
  // Each call nests 25 parenthesised expressions: the interpreter's own depth limit trips before
  // the call-depth limit, so the stack stays bounded (about 0.6 MiB).
  std::string inner = "f(n - 1)";
  for (int i = 0; i < 25; ++i) inner = "(" + inner + " ~ '')";
  const std::string source = "{% macro f(n) %}{% if n > 0 %}{% for x in [1] %}{{ " + inner +
                             " }}{% endfor %}{% endif %}{% endmacro %}{{ f(60) }}";
  EXPECT_EQ(render_or_error(source, {}),
            "ERROR: template line 1: expressions nested too deeply (limit 1000)");
}

TEST(ChatTemplateLimits, ExpressionNestingWhileParsing) {
  const std::string deep = "{{ " + std::string(1000, '(') + "1" + std::string(1000, ')') + " }}";
  const auto parsed = ChatTemplate::parse(deep);
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message, "template line 1: template nested too deeply (more than 128 levels)");
}

TEST(ChatTemplateLimits, BlockNestingWhileParsing) {
  std::string deep;
  for (int i = 0; i < 500; ++i) deep += "{% if true %}";
  for (int i = 0; i < 500; ++i) deep += "{% endif %}";
  const auto parsed = ChatTemplate::parse(deep);
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message, "template line 1: template nested too deeply (more than 128 levels)");
}

TEST(ChatTemplateLimits, HugeStringsAndLists) {
  EXPECT_EQ(render_or_error("{{ 'x' * 1000000000000 }}", {}),
            "ERROR: template line 1: string too long (67108865 bytes; the limit is 67108864)");
  EXPECT_EQ(render_or_error("{{ ([1] * 100000000)|length }}", {}),
            "ERROR: template line 1: sequence too long (4194305 items; the limit is 4194304)");
}

TEST(ChatTemplateLimits, AllocationBudget) {
  ChatTemplateRenderOptions options = test_render_options();
  options.max_allocated_bytes = 1 << 20;
  // Each step builds a 100 kB string: the 11th crosses 1 MiB.
  EXPECT_EQ(
      render_or_error(
          "{% set ns = namespace(s='') %}{% for i in range(20) %}{% set ns.s = 'x' * 100000 %}"
          "{% endfor %}{{ ns.s|length }}",
          {}, options),
      "ERROR: template line 1: the template built more than 1048576 bytes of strings and lists "
      "(max_allocated_bytes)");
}

TEST(ChatTemplateLimits, ValuesNestedTooDeeply) {
  // Wrapping a list in a list on every iteration: refused at 256 levels instead of overflowing the
  // stack later when the value is printed or destroyed.
  EXPECT_EQ(render_or_error(
                "{% set ns = namespace(v=[]) %}{% for i in range(1000) %}{% set ns.v = [ns.v] %}"
                "{% endfor %}{{ ns.v }}",
                {}),
            "ERROR: template line 1: value nested deeper than 256 levels");
}

TEST(ChatTemplateLimits, NamespaceChainsAreTornDownSafely) {
  // 10 000 namespaces, each holding the previous one: printing is bounded, and destroying the
  // chain after the render does not recurse through it.
  const std::string source =
      "{% set ns = namespace(head=none) %}{% for i in range(9999) %}"
      "{% set ns.head = namespace(next=ns.head) %}{% endfor %}{{ ns.head.next.next.next is defined "
      "}}";
  EXPECT_EQ(render_or_error(source, {}), "True");
  EXPECT_EQ(render_or_error("{% for i in range(10001) %}{% set n = namespace() %}{% endfor %}", {}),
            "ERROR: template line 1: too many namespaces and cyclers (the limit is 10000)");
}

TEST(ChatTemplateLimits, SelfReferenceIsPrintedLikePython) {
  EXPECT_EQ(render_or_error("{% set ns = namespace(a=1) %}{% set ns.me = ns %}{{ ns }}", {}),
            "<Namespace {'a': 1, 'me': <Namespace {...}>}>");
}

TEST(ChatTemplateLimits, DeeplyNestedContextIsRefused) {
  boost::json::value nested = boost::json::array();
  for (int i = 0; i < 1000; ++i) {
    boost::json::array wrapper;
    wrapper.push_back(std::move(nested));
    nested = std::move(wrapper);
  }
  boost::json::object context;
  context["deep"] = std::move(nested);
  EXPECT_EQ(render_or_error("{{ deep|length }}", context),
            "ERROR: value nested deeper than 256 levels");
}

// --- malformed input ----------------------------------------------------------------------------

TEST(ChatTemplateMalformedInput, InvalidUtf8PassesThroughUnchanged) {
  const std::string bytes = "a\xff\xc3(b";
  boost::json::object context;
  context["text"] = bytes;
  EXPECT_EQ(render_or_error("{{ text }}|" + bytes + "|{{ text|length }}", context),
            bytes + "|" + bytes + "|5");
}

TEST(ChatTemplateMalformedInput, EmptyTemplateAndContext) {
  EXPECT_EQ(render_or_error("", {}), "");
  EXPECT_EQ(render_or_error("{{ messages }}", {}), "");
}

TEST(ChatTemplateMalformedInput, EveryPrefixOfARealTemplateFailsCleanly) {
  // Cutting a template anywhere must give a parse error or a render result, never a crash.
  const std::string source =
      read_file(chat_template_test_dir() / "templates" / "smollm2-135m-instruct.jinja");
  const auto context = boost::json::parse(R"({"messages": [{"role": "user", "content": "hi"}],
                                              "add_generation_prompt": true})")
                           .as_object();
  for (std::size_t cut = 0; cut <= source.size(); ++cut) {
    const auto parsed = ChatTemplate::parse(source.substr(0, cut));
    if (parsed) static_cast<void>(parsed->render(context));
  }
}

// --- concurrency --------------------------------------------------------------------------------

TEST(ChatTemplateConcurrency, OneTemplateRendersOnManyThreads) {
  const auto parsed = ChatTemplate::parse(
      "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{{ "
      "m.content|upper }}"
      "{% endfor %}{{ ns.n }}{{ strftime_now('%Y') }}");
  ASSERT_TRUE(parsed) << parsed.error();
  const auto context =
      boost::json::parse(R"({"messages": [{"content": "a"}, {"content": "b"}]})").as_object();
  std::vector<std::thread> threads;
  std::vector<std::string> results(8);
  for (std::size_t t = 0; t < results.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const auto rendered = parsed->render(context, test_render_options());
        results[t] = rendered ? *rendered : rendered.error().message;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& result : results) EXPECT_EQ(result, "AB22025");
}

}  // namespace
}  // namespace lpx::test
