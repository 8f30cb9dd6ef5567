// Statements, whitespace control, scoping, macros and globals, case by case. Every expected value
// was computed by rendering the same source with Python's jinja2 3.1 in the Hugging Face
// environment and the context of sample_context(), then written here as a literal.
#include <gtest/gtest.h>

#include "chat_template_test_support.hpp"

namespace lpx::test {
namespace {

using Case = RenderCase;


const Case kWhitespaceCases[] = {
    {"TrimBlocksEatsOneNewline",
     "{% if true %}\na\n{% endif %}\nb\n\n{% if true %}c{% endif %}\n\nd", "a\nb\n\nc\nd"},
    {"LstripBlocksEatsIndentBeforeTags",
     "x\n    {% if true %}\n    y\n    {% endif %}\n  {# note #}\nz", "x\n    y\nz"},
    {"LstripDoesNotTouchVariables", "  {{ 'v' }}\n  {% if true %}w{% endif %}", "  v\nw"},
    {"LstripNeedsOnlyWhitespaceBeforeTag", "a {% if true %}b{% endif %} c\n", "a b c"},
    {"MinusStripsAllWhitespace", "a  \n\n  {%- if true -%}  \n\n  b  \n  {%- endif -%}\n\n  c",
     "abc"},
    {"MinusOnVariables", "a\n  {{- 'b' -}}\n  c {{- ' d ' }} e", "abc d  e"},
    {"PlusDisablesLstripAndTrim", "a\n  {%+ if true %}b{% endif +%}\nc", "a\n  b\nc"},
    {"CommentsWithWhitespaceControl", "a\n  {#- comment -#}  \nb {# keep #}\nc", "ab c"},
    {"RawBlock",
     "{% raw %}\n  {{ x }}{% if %}{% endraw %}\nd {%- raw -%}  [{{ y }}]  {%- endraw -%} e",
     "\n  {{ x }}{% if %}d[{{ y }}]e"},
    {"CarriageReturnsNormalized", "a\r\nb\rc{% if true %}\r\nd{% endif %}", "a\nb\ncd"},
    {"OneTrailingNewlineDropped", "a\n\n", "a\n"},
    {"LeadingWhitespaceOfSourceWithLstrip", "  {% if true %}x{% endif %}", "x"},
    {"UnicodeWhitespaceStrippedByMinus", "a  {{- 'b' -}}　\nc", "abc"},
};
const Case kLoopCases[] = {
    {"LoopVariables",
     "{% for x in l %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ "
     "loop.first }}{{ loop.last }}{{ loop.length }}[{{ loop.previtem }}][{{ loop.nextitem }}]{{ "
     "loop.depth }}|{% endfor %}",
     "1032TrueFalse3[][1]1|2121FalseFalse3[3][2]1|3210FalseTrue3[1][]1|"},
    {"LoopFilterCountsKeptItems",
     "{% for x in l if x > 1 %}{{ loop.index }}:{{ x }}/{{ loop.length }}{{ '.' if loop.last }} {% "
     "endfor %}",
     "1:3/2 2:2/2. "},
    {"LoopElse",
     "{% for x in [] %}a{% else %}empty{% endfor %} {% for x in l if x > 5 %}a{% else %}filtered{% "
     "endfor %} {% for x in l %}{{ x }}{% else %}no{% endfor %}",
     "empty filtered 312"},
    {"BreakAndContinue",
     "{% for x in [1, 2, 3, 4, 5] %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 4 %}{% "
     "break %}{% endif %}{{ x }}{% endfor %}",
     "13"},
    {"UnpackingTargets",
     "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %} {% for (a, b) in [[1, 2], 'xy'] %}{{ "
     "a }}{{ b }},{% endfor %} {% for c in d %}{{ c }}{% endfor %}",
     "a=1;b=[1, 2]; 12,xy, ab"},
    {"LoopOverStringAndDict",
     "{% for ch in s %}{{ ch }}.{% endfor %} {% for k in {'z': 1, 'a': 2} %}{{ k }}{% endfor %}",
     "h.é.l.l.o. za"},
    {"NestedLoopsShadowLoop",
     "{% for a in [1, 2] %}{% for b in 'xy' %}{{ a }}{{ b }}{{ loop.index }} {% endfor %}{{ "
     "loop.index }}|{% endfor %}",
     "1x1 1y2 1|2x1 2y2 2|"},
    {"LoopCycleAndChanged",
     "{% for x in [1, 1, 2, 2, 3] %}{{ loop.cycle('a', 'b', 'c') }}{{ loop.changed(x) }} {% endfor "
     "%}",
     "aTrue bFalse cTrue aFalse bTrue "},
    {"RecursiveLoop",
     "{% for item in [{'n': 'a', 'c': [{'n': 'b', 'c': [{'n': 'c', 'c': []}]}]}, {'n': 'd', 'c': "
     "[]}] recursive %}{{ item.n }}{{ loop.depth }}{% if item.c %}({{ loop(item.c) }}){% endif "
     "%}{% endfor %}",
     "a1(b2(c3))d1"},
    {"LoopPrintsLoopContext", "{% for x in l %}{{ loop }}{% endfor %}",
     "<LoopContext 1/3><LoopContext 2/3><LoopContext 3/3>"},
};
const Case kScopeCases[] = {
    {"SetInsideLoopDoesNotLeak",
     "{% set x = 0 %}{% for i in range(3) %}{{ x }}{% set x = x + 1 %}{{ x }};{% endfor %}{{ x }}",
     "01;01;01;0"},
    {"SetInsideIfIsVisible",
     "{% if true %}{% set y = 5 %}{% endif %}{{ y }} {% for i in range(3) %}{% if i == 0 %}{% set "
     "z = 5 %}{% endif %}[{{ z }}]{% endfor %}",
     "5 [5][][]"},
    {"NamespaceCarriesValuesOutOfLoops",
     "{% set ns = namespace(total=0, found=false) %}{% for x in l %}{% set ns.total = ns.total + x "
     "%}{% if x == 1 %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.total }} {{ ns.found "
     "}} {{ ns }}",
     "6 True <Namespace {'total': 6, 'found': True}>"},
    {"NamespaceFromDictAndKeywords",
     "{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}[{{ ns.c }}]", "12[]"},
    {"BlockSet",
     "{% set x %}a{{ 1 }}b{% endset %}[{{ x }}] {% set y | upper %}up{% endset %}{{ y }}",
     "[a1b] UP"},
    {"MultipleAssignment",
     "{% set a, b = 1, 2 %}{{ a }}{{ b }} {% set (c, d) = 'xy' %}{{ c }}{{ d }}", "12 xy"},
    {"WithBlock",
     "{% set a = 'outer' %}{% with a = 1, b = 2 %}{{ a + b }}{% set c = 5 %}{% endwith %}[{{ c "
     "}}]{{ a }}",
     "3[]outer"},
    {"FilterBlock",
     "{% filter upper %}abc{{ 'd' }}{% set z = 3 %}{% endfilter %}[{{ z }}] {% filter "
     "trim|replace('a', 'b') %}  aa  {% endfilter %}",
     "ABCD[] bb"},
    {"SetOverridesContextVariable",
     "{% set messages = m[1:] %}{{ messages|length }} {% set s = s|upper %}{{ s }}", "1 HÉLLO"},
    {"GlobalsCanBeShadowed", "{% set range = 'mine' %}{{ range }}", "mine"},
    {"AssignedLaterIsUndefinedInNestedLoop",
     "{% for i in [1] %}{% for j in [1] %}[{{ s }}]{% endfor %}{% set s = 'a' %}[{{ s }}]{% endfor "
     "%}",
     "[][a]"},
    {"AssignedLaterAtTopLevelIsUndefinedInLoop",
     "{% for j in [1] %}[{{ s }}]{% endfor %}{% set s = 'b' %}[{{ s }}]", "[][b]"},
    {"ReadBeforeAssignResolvesFromContext",
     "{% for i in [1] %}[{{ s }}]{% set s = 'a' %}[{{ s }}]{% endfor %}[{{ s }}]",
     "[héllo][a][héllo]"},
    {"MacroClosesOverLoopVariable",
     "{% for i in [1] %}{% macro g() %}[{{ s }}]{% endmacro %}{{ g() }}{% set s = 'a' %}{{ g() "
     "}}{% endfor %}",
     "[][a]"},
    {"ConditionalAssignKeepsContextValue",
     "{% for i in [1] %}{% for j in [1] %}[{{ s }}]{% endfor %}{% if false %}{% set s = 'a' %}{% "
     "endif %}{% endfor %}",
     "[héllo]"},
    {"ForElseHasItsOwnScope",
     "{% for i in [] %}{% else %}{% set q = 1 %}[{{ q }}]{% endfor %}[{{ q }}]", "[1][]"},
};
const Case kMacroCases[] = {
    {"MacroDefaultsAndKeywords",
     "{% macro f(a, b=2, c='x') %}{{ a }}-{{ b }}-{{ c }}{% endmacro %}{{ f(1) }} {{ f(1, c=3) }} "
     "{{ f(b=5, a=0) }} {{ f }}",
     "1-2-x 1-2-3 0-5-x <Macro 'f'>"},
    {"MacroMissingArgumentIsUndefined",
     "{% macro f(a) %}[{{ a }}]{{ a is defined }}{% endmacro %}{{ f() }}", "[]False"},
    {"RecursiveMacro",
     "{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(3) }}",
     "321"},
    {"MacroSeesVariablesAtCallTime",
     "{% set x = 1 %}{% macro f() %}{{ x }}{% endmacro %}{% set x = 2 %}{{ f() }}", "2"},
    {"MacroLocalSetDoesNotLeak",
     "{% macro f() %}{% set q = 1 %}{{ q }}{% endmacro %}{{ f() }}[{{ q }}]", "1[]"},
    {"MacroDefaultUsesEarlierParameter",
     "{% macro f(a, b=a * 2) %}{{ a }},{{ b }}{% endmacro %}{{ f(3) }}", "3,6"},
    {"MacroInsideLoopCapturesLoopVariable",
     "{% for i in range(2) %}{% macro g() %}{{ i }}{% endmacro %}{{ g() }}{% endfor %}", "01"},
    {"MacroOutputIsAString", "{% macro f() %} x {% endmacro %}[{{ f()|trim }}] {{ f() is string }}",
     "[x] True"},
};
const Case kGlobalCases[] = {
    {"RangeFunction",
     "{{ range(3)|list }} {{ range(1, 10, 3)|list }} {{ range(10, 0, -3)|list }} {{ range(0)|list "
     "}} {{ range(5)|length }}",
     "[0, 1, 2] [1, 4, 7] [10, 7, 4, 1] [] 5"},
    {"DictFunction", "{{ dict(a=1, b='x') }} {{ dict([('k', 'v')]) }}",
     "{'a': 1, 'b': 'x'} {'k': 'v'}"},
    {"CyclerAndJoiner",
     "{% set c = cycler('a', 'b') %}{{ c.next() }}{{ c.next() }}{{ c.next() }}{{ c.current }} {% "
     "set j = joiner(', ') %}{% for x in l %}{{ j() }}{{ x }}{% endfor %}",
     "abab 3, 1, 2"},
    {"StrftimeNow",
     "{{ strftime_now('%Y-%m-%d %H:%M:%S') }} {{ strftime_now('%d %b %Y') }} {{ strftime_now('%B "
     "%d, %Y %A %j') }}",
     "2025-03-14 09:26:53 14 Mar 2025 March 14, 2025 Friday 073"},
    {"GenerationTagIsTransparent",
     "{% generation %}assistant text{% set g = 1 %}{% endgeneration %}[{{ g }}]",
     "assistant text[]"},
};

class ChatTemplateStatement : public ::testing::TestWithParam<Case> {};

TEST_P(ChatTemplateStatement, MatchesJinja2) {
  EXPECT_EQ(render_or_error(GetParam().source, sample_context()), GetParam().expected)
      << GetParam().source;
}

INSTANTIATE_TEST_SUITE_P(Whitespace, ChatTemplateStatement, ::testing::ValuesIn(kWhitespaceCases),
                         render_case_name);
INSTANTIATE_TEST_SUITE_P(Loops, ChatTemplateStatement, ::testing::ValuesIn(kLoopCases), render_case_name);
INSTANTIATE_TEST_SUITE_P(Scopes, ChatTemplateStatement, ::testing::ValuesIn(kScopeCases),
                         render_case_name);
INSTANTIATE_TEST_SUITE_P(Macros, ChatTemplateStatement, ::testing::ValuesIn(kMacroCases),
                         render_case_name);
INSTANTIATE_TEST_SUITE_P(Globals, ChatTemplateStatement, ::testing::ValuesIn(kGlobalCases),
                         render_case_name);

}  // namespace
}  // namespace lpx::test
