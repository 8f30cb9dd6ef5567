// Filters and tests, case by case. Every expected value was computed by rendering the same
// source with Python's jinja2 3.1 in the Hugging Face environment and the context of
// sample_context(), then written here as a literal.
#include <gtest/gtest.h>

#include "chat_template_test_support.hpp"

namespace lpx::test {
namespace {

using Case = RenderCase;


const Case kTextFilterCases[] = {
    {"Trim",
     "[{{ '  a b \\n'|trim }}] [{{ 'xxaxx'|trim('x') }}] [{{ 5|trim }}] [{{ '\\u2003x\\u2003'|trim "
     "}}]",
     "[a b] [a] [5] [x]"},
    {"CaseFilters",
     "{{ 'hEllo'|upper }} {{ 'HeLLo'|lower }} {{ 'hELLO wORLD'|capitalize }} {{ \"hello they're "
     "a-b c(d [e <f\"|title }} {{ 'ÀÉÎ'|lower }} {{ 'é'|upper }}",
     "HELLO hello Hello world Hello They're A-B C(D [E <F àéî É"},
    {"Replace",
     "{{ 'a-b-c'|replace('-', '+') }} {{ 'a-b-c'|replace('-', '', 1) }} {{ 123|replace(2, 'x') }} "
     "{{ 'aaa'|replace('a', 'bb') }}",
     "a+b+c ab-c 1x3 bbbbbb"},
    {"StringConversion",
     "{{ 1|string }} {{ 1.0|string }} {{ none|string }} {{ true|string }} {{ [1, 'a']|string }} {{ "
     "(1|string) is string }}",
     "1 1.0 None True [1, 'a'] True"},
    {"IntFilter",
     "{{ 3.7|int }} {{ -3.7|int }} {{ '3.7'|int }} {{ 'x'|int }} {{ 'x'|int(7) }} {{ '42'|int }} "
     "{{ ' 42 '|int }} {{ '0x1A'|int(0, 16) }} {{ '1_000'|int }} {{ true|int }} {{ none|int }}",
     "3 -3 3 0 7 42 42 26 1000 1 0"},
    {"FloatFilter",
     "{{ '3'|float }} {{ 'x'|float }} {{ ' -2.5e3 '|float }} {{ 2|float }} {{ 'inf'|float }} {{ "
     "none|float(1.5) }}",
     "3.0 0.0 -2500.0 2.0 inf 1.5"},
    {"RoundFilter",
     "{{ 2.5|round }} {{ 3.5|round }} {{ 2.675|round(2) }} {{ 3|round }} {{ 2.5|round(0, 'floor') "
     "}} {{ 2.1|round(0, 'ceil') }} {{ 1234.5678|round(-2) }} {{ -0.5|round }}",
     "2.0 4.0 2.67 3 2.0 3.0 1200.0 -0.0"},
    {"AbsFilter", "{{ -3|abs }} {{ 2.5|abs }} {{ -0.0|abs }}", "3 2.5 0.0"},
    {"ToJson", "{{ {'a': 1, 'b': none, 'c': [1.5, true, 'x\"y'], 'ü': 'é'}|tojson }}",
     "{\"a\": 1, \"b\": null, \"c\": [1.5, true, \"x\\\"y\"], \"ü\": \"é\"}"},
    {"ToJsonIndent", "{{ {'a': {'b': []}, 'c': {}, 'd': [1, [2]]}|tojson(indent=2) }}",
     "{\n  \"a\": {\n    \"b\": []\n  },\n  \"c\": {},\n  \"d\": [\n    1,\n    [\n      2\n    "
     "]\n  ]\n}"},
    {"ToJsonOptions",
     "{{ [1, 2]|tojson(separators=(',', ':')) }} {{ {'b': 1, 'a': 2}|tojson(sort_keys=true) }} {{ "
     "'é'|tojson(ensure_ascii=true) }} {{ '😀'|tojson(true) }} {{ {'a': [1]}|tojson(indent='\\t') "
     "}}",
     "[1,2] {\"a\": 2, \"b\": 1} \"\\u00e9\" \"\\ud83d\\ude00\" {\n\t\"a\": [\n\t\t1\n\t]\n}"},
    {"ToJsonEscapes",
     "{{ 'é\\n\\t\\x01\\x7f\\\\\"'|tojson }} {{ {1: 'a', 2.5: 'b', true: 'c', none: 'd'}|tojson }} "
     "{{ (1, 2)|tojson }} {{ 1e16|tojson }}",
     "\"é\\n\\t\\u0001\177\\\\\\\"\" {\"1\": \"c\", \"2.5\": \"b\", \"null\": \"d\"} [1, 2] 1e+16"},
    {"EscapeAndSafe",
     "{{ '<a href=\"x\">&\\'</a>'|e }} {{ '<b>'|escape }} {{ '<b>'|safe }} {{ 5|safe }}",
     "&lt;a href=&#34;x&#34;&gt;&amp;&#39;&lt;/a&gt; &lt;b&gt; <b> 5"},
    {"Indent",
     "{{ 'a\\nb\\n\\nc'|indent(2) }}|{{ 'a\\nb'|indent(2, true) }}|{{ 'a\\n\\nb'|indent(2, "
     "blank=true) }}|{{ 'a\\nb'|indent('> ') }}",
     "a\n  b\n\n  c|  a\n  b|a\n  \n  b|a\n> b"},
    {"CenterTruncateWordcount",
     "[{{ 'abc'|center(9) }}] {{ 'hello world foo'|truncate(9) }} {{ 'hello world foo'|truncate(9, "
     "true) }} {{ 'short'|truncate(9) }} {{ 'a b, c-d'|wordcount }}",
     "[   abc   ] hello... hello ... short 4"},
    {"FormatFilter",
     "{{ '%s-%d'|format('x', 3) }} {{ '%(a)s'|format(a='kw') }} {{ '%.3f'|format(2) }} {{ "
     "'%5.1f%%'|format(99.44) }}",
     "x-3 kw 2.000  99.4%"},
};
const Case kSequenceFilterCases[] = {
    {"LengthAndCount",
     "{{ l|length }} {{ l|count }} {{ d|length }} {{ 'héllo'|length }} {{ missing|length }}",
     "3 3 2 5 0"},
    {"FirstAndLast",
     "{{ l|first }} {{ l|last }} {{ 'abc'|first }} {{ 'abc'|last }} {{ d|first }} [{{ []|first }}]",
     "3 2 a c a []"},
    {"Join",
     "{{ l|join(',') }} {{ l|join }} {{ m|join(', ', attribute='role') }} {{ [1, 'a', "
     "none]|join('|') }}",
     "3,1,2 312 user, assistant 1|a|None"},
    {"ListAndItems",
     "{{ d|list }} {{ 'ab'|list }} {{ d|items|list }} {{ (1, 2)|list }} {{ missing|items|list }}",
     "['a', 'b'] ['a', 'b'] [('a', 1), ('b', [1, 2])] [1, 2] []"},
    {"Sort",
     "{{ l|sort }} {{ l|sort(reverse=true) }} {{ ['b', 'A', 'a', 'B']|sort }} {{ ['b', 'A', 'a', "
     "'B']|sort(case_sensitive=true) }} {{ m|sort(attribute='role', "
     "reverse=true)|map(attribute='role')|list }}",
     "[1, 2, 3] [3, 2, 1] ['A', 'a', 'b', 'B'] ['A', 'B', 'a', 'b'] ['user', 'assistant']"},
    {"SortByMultipleAttributes",
     "{{ [{'a': 2, 'b': 1}, {'a': 1, 'b': 2}, {'a': 1, 'b': 1}]|sort(attribute='a,b') }}",
     "[{'a': 1, 'b': 1}, {'a': 1, 'b': 2}, {'a': 2, 'b': 1}]"},
    {"Unique",
     "{{ ['b', 'A', 'a', 'B']|unique|list }} {{ [1, 1.0, true, 2]|unique|list }} {{ ['a', "
     "'A']|unique(case_sensitive=true)|list }} {{ m|unique(attribute='role')|list|length }}",
     "['b', 'A'] [1, 2] ['a', 'A'] 2"},
    {"Reverse", "{{ 'abc'|reverse }} {{ l|reverse|list }} {{ d|reverse|list }} {{ s|reverse }}",
     "cba [2, 1, 3] ['b', 'a'] olléh"},
    {"MapFilter",
     "{{ m|map(attribute='role')|list }} {{ m|map(attribute='nope', default='z')|list }} {{ ['a', "
     "'B']|map('upper')|list }} {{ [1.25, 2.5]|map('round', 1)|list }} {{ [[1, "
     "2]]|map(attribute='0')|list }}",
     "['user', 'assistant'] ['z', 'z'] ['A', 'B'] [1.2, 2.5] [1]"},
    {"SelectAndReject",
     "{{ [1, 0, 2, none]|select|list }} {{ [1, 2, 3, 4]|select('odd')|list }} {{ [1, 2, "
     "3]|reject('equalto', 2)|list }} {{ [1, 5, 10]|select('>', 4)|list }} {{ ['a', "
     "'bb']|reject('in', ['a'])|list }}",
     "[1, 2] [1, 3] [1, 3] [5, 10] ['bb']"},
    {"SelectAttrAndRejectAttr",
     "{{ m|selectattr('role', 'equalto', 'user')|list }} {{ m|rejectattr('role', 'eq', "
     "'user')|map(attribute='content')|list }} {{ [{'x': 1}, {'x': 0}, {}]|selectattr('x')|list }}",
     "[{'role': 'user', 'content': 'hi'}] [' yo '] [{'x': 1}]"},
    {"GeneratorsAreAlwaysTrue",
     "{% if m|selectattr('role', 'equalto', 'nobody') %}true{% endif %} {{ m|selectattr('role', "
     "'equalto', 'nobody')|list|length }}",
     "true 0"},
    {"MinMaxSum",
     "{{ [3, 1, 2]|max }} {{ [3, 1, 2]|min }} {{ ['b', 'A']|max }} {{ ['b', "
     "'A']|max(case_sensitive=true) }} {{ [3, 1, 2]|sum }} {{ [{'a': 2}, {'a': "
     "5}]|sum(attribute='a') }} {{ [1.5, 2]|sum(start=10) }} [{{ []|max }}]",
     "3 1 b b 6 7 13.5 []"},
    {"DictSort",
     "{{ {'b': 1, 'a': 2, 'C': 0}|dictsort }} {{ {'b': 1, 'a': 2}|dictsort(by='value') }} {{ {'b': "
     "1, 'a': 2}|dictsort(reverse=true) }}",
     "[('a', 2), ('b', 1), ('C', 0)] [('b', 1), ('a', 2)] [('b', 1), ('a', 2)]"},
    {"BatchAndAttr",
     "{{ [1, 2, 3, 4, 5]|batch(2)|list }} {{ [1, 2, 3]|batch(2, 0)|list }} {{ d|attr('a') }}|{{ "
     "(d|attr('items'))()|list }}",
     "[[1, 2], [3, 4], [5]] [[1, 2], [3, 0]] |[('a', 1), ('b', [1, 2])]"},
};
const Case kTestCases[] = {
    {"TypeTests",
     "{{ 1 is number }} {{ true is number }} {{ true is integer }} {{ 1 is integer }} {{ 1.0 is "
     "float }} {{ 'a' is string }} {{ d is mapping }} {{ l is mapping }} {{ true is boolean }} {{ "
     "1 is boolean }}",
     "True True False True True True True False True False"},
    {"DefinedAndNoneTests",
     "{{ missing is defined }} {{ missing is undefined }} {{ n is none }} {{ n is defined }} {{ "
     "m[0].role is defined }} {{ m[0].nope is undefined }} {{ d is not none }}",
     "False True True True True True True"},
    {"IterableAndSequenceTests",
     "{{ 'a' is iterable }} {{ l is iterable }} {{ d is iterable }} {{ 1 is iterable }} {{ missing "
     "is iterable }} {{ d is sequence }} {{ 1 is sequence }} {{ missing is sequence }} {{ "
     "(l|select) is sequence }}",
     "True True True False True True False True False"},
    {"TrueFalseTests",
     "{{ true is true }} {{ 1 is true }} {{ false is false }} {{ 0 is false }} {{ none is false }}",
     "True False True False False"},
    {"NumberTests",
     "{{ -0.5 is odd }} {{ -0.5 is even }} {{ 3.0 is odd }} {{ 3 is odd }} {{ 3 is even }} {{ 4 is "
     "divisibleby 2 }} {{ 9 is divisibleby(3) }} {{ 7 is divisibleby 2 }}",
     "False False True True False True True False"},
    {"ComparisonTests",
     "{{ 'a' is eq 'a' }} {{ 1 is equalto 2 }} {{ 2 is ne 3 }} {{ 3 is gt 2 }} {{ 3 is ge 3 }} {{ "
     "2 is lt 3 }} {{ 2 is le 1 }} {{ 3 is greaterthan 2 }} {{ 3 is lessthan 2 }}",
     "True False True True True True False True False"},
    {"MembershipAndCaseTests",
     "{{ 'x' is in 'xyz' }} {{ 2 is in [1, 2] }} {{ 'a' is in d }} {{ 'abc' is lower }} {{ 'ABC' "
     "is upper }} {{ 'Abc' is lower }} {{ '123' is upper }}",
     "True True True True True False False"},
    {"CallableAndMiscTests",
     "{{ range is callable }} {{ 'x' is callable }} {{ 'upper' is filter }} {{ 'nope' is filter }} "
     "{{ 'odd' is test }} {{ none is sameas none }} {{ 1 is sameas 1 }} {{ l is sameas l }} {{ 'a' "
     "is escaped }}",
     "True False True False True True True True False"},
};

class ChatTemplateFilter : public ::testing::TestWithParam<Case> {};

TEST_P(ChatTemplateFilter, MatchesJinja2) {
  EXPECT_EQ(render_or_error(GetParam().source, sample_context()), GetParam().expected)
      << GetParam().source;
}

INSTANTIATE_TEST_SUITE_P(Text, ChatTemplateFilter, ::testing::ValuesIn(kTextFilterCases),
                         render_case_name);
INSTANTIATE_TEST_SUITE_P(Sequences, ChatTemplateFilter, ::testing::ValuesIn(kSequenceFilterCases),
                         render_case_name);
INSTANTIATE_TEST_SUITE_P(Tests, ChatTemplateFilter, ::testing::ValuesIn(kTestCases), render_case_name);

}  // namespace
}  // namespace lpx::test
