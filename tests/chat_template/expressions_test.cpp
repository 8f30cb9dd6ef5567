// The expression language, case by case. Every expected value was computed by rendering the same
// source with Python's jinja2 3.1 in the Hugging Face environment and the context of
// sample_context(), then written here as a literal.
#include <gtest/gtest.h>

#include "chat_template_test_support.hpp"

namespace lpx::test {
namespace {

using Case = RenderCase;


const Case kLiteralCases[] = {
    {"IntegerAndFloatPrinting",
     "{{ 1 }} {{ 1.0 }} {{ 100.0 }} {{ 0.5 }} {{ -0.0 }} {{ 1_000 }} {{ 0x1F }} {{ 0o17 }} {{ "
     "0b101 }}",
     "1 1.0 100.0 0.5 -0.0 1000 31 15 5"},
    {"FloatReprLikePython",
     "{{ 1e16 }} {{ 1e15 }} {{ 1.5e-5 }} {{ 0.0001 }} {{ 1e100 }} {{ 0.1 + 0.2 }} {{ 1/3 }} {{ 2 "
     "** 0.5 }} {{ 123456789.125 }}",
     "1e+16 1000000000000000.0 1.5e-05 0.0001 1e+100 0.30000000000000004 0.3333333333333333 "
     "1.4142135623730951 123456789.125"},
    {"BooleansAndNonePrintCapitalized",
     "{{ true }} {{ True }} {{ false }} {{ none }} {{ None }} {{ t }} {{ n }}",
     "True True False None None True None"},
    {"StringEscapes",
     "{{ 'it\\'s' }}|{{ \"a\\\"b\" }}|{{ 'a\\nb\\tc' }}|{{ '\\d\\w' }}|{{ "
     "'\\x41\\u00e9\\U0001F600' }}|{{ '\\\\' }}|{{ '\\101' }}",
     "it's|a\"b|a\nb\tc|\\d\\w|Aé😀|\\|A"},
    {"AdjacentStringsConcatenate", "{{ 'a' 'b' \"c\" }}", "abc"},
    {"ListReprLikePython",
     "{{ [1, 'a', none, true, 1.5, [2]] }} {{ [] }} {{ ['it\\'s', 'a\"b', \"x'y\\\"z\"] }}",
     "[1, 'a', None, True, 1.5, [2]] [] [\"it's\", 'a\"b', 'x\\'y\"z']"},
    {"TupleRepr", "{{ (1, 2) }} {{ (1,) }} {{ () }} {{ 1, 'x' }}", "(1, 2) (1,) () (1, 'x')"},
    {"DictRepr", "{{ {'a': 1, 'b': [none, false]} }} {{ {} }} {{ {1: 'x', 2.5: 'y'} }}",
     "{'a': 1, 'b': [None, False]} {} {1: 'x', 2.5: 'y'}"},
    {"StringReprEscapes", "{{ ['\\n', '\\t', '\\x07', '\\xa0', '\\u200b', 'é', '日本'] }}",
     "['\\n', '\\t', '\\x07', '\\xa0', '\\u200b', 'é', '日本']"},
    {"ContextValuesPrint", "{{ d }} {{ l }} {{ m[0] }} {{ f }}",
     "{'a': 1, 'b': [1, 2]} [3, 1, 2] {'role': 'user', 'content': 'hi'} 1.5"},
};
const Case kArithmeticCases[] = {
    {"IntegerArithmetic",
     "{{ 7 + 3 }} {{ 7 - 10 }} {{ 6 * 7 }} {{ 7 / 2 }} {{ 8 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 "
     "% 3 }} {{ -7 % 3 }} {{ 7 % -3 }}",
     "10 -3 42 3.5 4.0 3 -4 1 2 -2"},
    {"FloatArithmetic",
     "{{ 1.5 + 1 }} {{ 5.5 // 2 }} {{ -5.5 // 2 }} {{ 5.5 % 2 }} {{ -5.5 % 2 }} {{ 2.5 * 2 }} {{ f "
     "* f }}",
     "2.5 2.0 -3.0 1.5 0.5 5.0 2.25"},
    {"PowerIsLeftAssociative",
     "{{ 2 ** 10 }} {{ 2 ** 3 ** 2 }} {{ 2 ** -1 }} {{ 4 ** 0.5 }} {{ 10 ** 18 }}",
     "1024 64 0.5 2.0 1000000000000000000"},
    {"UnaryMinusBindsTighterThanPower", "{{ -2 ** 2 }} {{ - 2 }} {{ +3 }} {{ -f }} {{ --1 }}",
     "4 -2 3 -1.5 1"},
    {"BooleansAreIntegers",
     "{{ true + 1 }} {{ true * 3 }} {{ false - 1 }} {{ true == 1 }} {{ 1 == 1.0 }}",
     "2 3 -1 True True"},
    {"StringAndListOperators",
     "{{ 'ab' + 'cd' }} {{ 'ab' * 3 }} {{ 3 * 'x' }} {{ [1] + [2, 3] }} {{ [0] * 3 }} {{ 'x' * 0 "
     "}}|{{ 'x' * -2 }}|",
     "abcd ababab xxx [1, 2, 3] [0, 0, 0] ||"},
    {"TildeConcatenatesStrings",
     "{{ 1 ~ 2 }} {{ 'a' ~ none ~ true }} {{ undefined_name ~ 'x' }} {{ 1.5 ~ [1] }}",
     "12 aNoneTrue x 1.5[1]"},
    {"PercentFormatting",
     "{{ 'plain' % l }} {{ '%s' % [1] }} {{ '%s-%d' % ('x', 3) }} {{ '%05.1f|%x|%r' % (3.14159, "
     "255, 'q') }} {{ '%(a)s!' % {'a': 1} }} {{ '%5s|%-5s|' % ('ab', 'cd') }} {{ '100%%' % () }}",
     "plain [1] x-3 003.1|ff|'q' 1!    ab|cd   | 100%"},
};
const Case kComparisonCases[] = {
    {"Comparisons",
     "{{ 1 < 2 }} {{ 2 <= 2 }} {{ 3 > 4 }} {{ 3 >= 4 }} {{ 1 == 1 }} {{ 1 != 1 }} {{ 'ab' < 'b' }} "
     "{{ [1, 2] < [1, 3] }} {{ (1, 2) < (1, 2, 0) }}",
     "True True False False True False True True True"},
    {"ComparisonChains", "{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 1 == 1 == 1 }} {{ 1 < 3 > 2 }}",
     "True False True True"},
    {"EqualityAcrossTypes",
     "{{ 1 == 1.0 }} {{ [1, 2] == [1, 2] }} {{ [1] == (1,) }} {{ {'a': 1} == {'a': 1} }} {{ 'a' == "
     "1 }} {{ none == none }} {{ undefined_a == undefined_b }} {{ none == false }}",
     "True True False True False True True False"},
    {"LogicReturnsOperands",
     "{{ 1 and 2 }} {{ 0 and 2 }} {{ none or 'x' }} {{ 0 or [] }} {{ 'a' or 'b' }} {{ not 0 }} {{ "
     "not 'x' }} {{ none and 1 }}",
     "2 0 x [] a True False None"},
    {"NotBindsLooserThanComparison", "{{ not 1 == 2 }} {{ not 1 in [1] }} {{ not none is none }}",
     "True False False"},
    {"MembershipOperators",
     "{{ 1 in l }} {{ 5 not in l }} {{ 'a' in d }} {{ 'z' in d }} {{ 'ell' in s }} {{ 'é' in s }} "
     "{{ 'x' in undefined_name }} {{ 'a' in d.keys() }}",
     "True True True False False True False True"},
    {"TernaryExpressions",
     "{{ 'yes' if t else 'no' }} {{ 'yes' if n else 'no' }} {{ 1 if false }}|{{ (1 if false) is "
     "defined }} {{ 'a' if false else 'b' if true else 'c' }}",
     "yes no |False b"},
    {"TruthinessOfValues",
     "{% for v in [0, 1, 0.0, '', 'x', [], [0], {}, {'a': 1}, none] %}{{ 'T' if v else 'F' }}{% "
     "endfor %}",
     "FTFFTFTFTF"},
};
const Case kAccessCases[] = {
    {"AttributeAndSubscriptAreInterchangeable",
     "{{ m[0].role }} {{ m[0]['role'] }} {{ d.a }} {{ d['a'] }} {{ l.0 }} {{ m.1.content }}",
     "user user 1 1 3  yo "},
    {"NegativeIndexes", "{{ l[-1] }} {{ s[-1] }} {{ m[-1]['role'] }}", "2 o assistant"},
    {"MissingAttributesAreUndefined",
     "[{{ d.nokey }}] [{{ d['nokey'] }}] [{{ l[10] }}] [{{ s[10] }}] [{{ d.nokey is defined }}] "
     "[{{ l[1.0] }}]",
     "[] [] [] [] [False] []"},
    {"Slicing",
     "{{ l[1:] }} {{ l[:-1] }} {{ l[::-1] }} {{ l[::2] }} {{ l[5:] }} {{ l[-10:2] }} {{ "
     "'abcdef'[1:5:2] }} {{ s[::-1] }} {{ s[1:3] }} {{ (1, 2, 3)[1:] }}",
     "[1, 2] [3, 1] [2, 1, 3] [3, 2] [] [3, 1] bd olléh él (2, 3)"},
    {"SlicingWithNegativeSteps",
     "{{ [0,1,2,3,4,5][4:1:-1] }} {{ [0,1,2,3,4,5][-1:-4:-2] }} {{ 'abcdef'[::-2] }} {{ "
     "[0,1,2][10:0:-1] }}",
     "[4, 3, 2] [5, 3] fdb [2, 1]"},
    {"DictMethodNamesWinOverKeys", "{{ {'items': 1}['items'] }} {{ {'get': 2}.get('get') }}",
     "1 2"},
    {"ConstantSlicesAreForgiving",
     "[{{ 5[1:] }}] [{{ (5[1:]) is defined }}] [{{ [7[1:], 1] }}] [{{ ('a' if true else n)[::-1] "
     "}}]",
     "[] [False] [[Undefined, 1]] [a]"},
    {"StringCodePointLength", "{{ s|length }} {{ s[1] }} {{ '日本語'|length }} {{ '日本語'[1:] }}",
     "5 é 3 本語"},
};
const Case kMethodCases[] = {
    {"StripMethods",
     "[{{ '  a b  '.strip() }}] [{{ 'xxaxx'.strip('x') }}] [{{ '\\n\\nhi  '.lstrip() }}] [{{ "
     "'hi\\n\\n'.rstrip('\\n') }}] [{{ '\\u00a0 x\\u3000'.strip() }}]",
     "[a b] [a] [hi  ] [hi] [x]"},
    {"SplitMethods",
     "{{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a b c'.split(' ', 1) }} {{ ' a  b c "
     "'.split(none, 1) }} {{ 'a\\nb\\r\\nc'.splitlines() }} {{ ''.split() }} {{ ''.split(',') }}",
     "['a', 'b', '', 'c'] ['a', 'b'] ['a', 'b c'] ['a', 'b c '] ['a', 'b', 'c'] [] ['']"},
    {"PrefixAndSuffixMethods",
     "{{ 'abc'.startswith('ab') }} {{ 'abc'.startswith('b') }} {{ 'abc'.endswith(('x', 'c')) }} {{ "
     "''.startswith('') }}",
     "True False True True"},
    {"CaseMethods",
     "{{ 'hEllo wOrld'.upper() }} {{ 'hEllo'.lower() }} {{ \"they're bill's\".title() }} {{ 'hELLO "
     "world'.capitalize() }} {{ 'Hello'.swapcase() }} {{ 'ÉCOLE'.lower() }} {{ 'straße'.upper() }}",
     "HELLO WORLD hello They'Re Bill'S Hello world hELLO école STRASSE"},
    {"SearchMethods",
     "{{ 'abcabc'.find('c') }} {{ 'abc'.find('z') }} {{ 'abcabc'.rfind('b') }} {{ "
     "'héllo'.find('l') }} {{ 'abcabc'.count('b') }} {{ 'aaa'.count('') }} {{ 'abc'.index('c') }}",
     "2 -1 4 2 2 4 2"},
    {"ReplaceAndJoin",
     "{{ 'a-b-c'.replace('-', '+') }} {{ 'a-b-c'.replace('-', '', 1) }} {{ 'ab'.replace('', '.') "
     "}} {{ ', '.join(['x', 'y']) }} {{ '-'.join('abc') }}",
     "a+b+c ab-c .a.b. x, y a-b-c"},
    {"FormatMethod",
     "{{ '{} and {}'.format(1, 'x') }} {{ '{1}{0}'.format('a', 'b') }} {{ "
     "'{name}!'.format(name='Bob') }} {{ '{{}} {0!r}'.format('q') }} {{ "
     "'{:>5}|{:<4}|{:^5}|{:05d}|{:.2f}'.format('ab', 'c', 'x', 42, 3.14159) }}",
     "1 and x ba Bob! {} 'q'    ab|c   |  x  |00042|3.14"},
    {"CharacterClassMethods",
     "{{ '123'.isdigit() }} {{ '12a'.isdigit() }} {{ 'abc'.isalpha() }} {{ 'ab1'.isalnum() }} {{ ' "
     "\\t'.isspace() }} {{ 'ABC'.isupper() }} {{ 'abc'.islower() }} {{ ''.isdigit() }}",
     "True False True True True True True False"},
    {"PaddingMethods",
     "[{{ 'abc'.center(9) }}] [{{ 'ab'.center(7, '*') }}] [{{ '42'.zfill(5) }}] [{{ '-42'.zfill(5) "
     "}}]",
     "[   abc   ] [***ab**] [00042] [-0042]"},
    {"DictMethods",
     "{{ d.get('a') }} {{ d.get('z') }} {{ d.get('z', 5) }} {{ d.keys()|list }} {{ d.values()|list "
     "}} {{ d.items()|list }} {{ d.items() }} {{ d.keys() }}",
     "1 None 5 ['a', 'b'] [1, [1, 2]] [('a', 1), ('b', [1, 2])] dict_items([('a', 1), ('b', [1, "
     "2])]) dict_keys(['a', 'b'])"},
    {"ListMethods", "{{ l.index(1) }} {{ l.count(3) }} {{ (1, 1, 2).count(1) }}", "1 1 2"},
};
const Case kUndefinedCases[] = {
    {"UndefinedPrintsEmpty",
     "[{{ missing }}] [{{ missing|length }}] [{{ missing|trim }}] [{{ missing|upper }}] [{{ "
     "missing|list }}] [{{ missing|default('dflt') }}]",
     "[] [0] [] [] [[]] [dflt]"},
    {"UndefinedIsFalsyAndIterable",
     "{% if not missing %}falsy{% endif %} {% for x in missing %}never{% else %}empty{% endfor %} "
     "{{ missing is iterable }} {{ missing is defined }}",
     "falsy empty True False"},
    {"DefaultFilterVariants",
     "{{ missing|d('x') }} {{ ''|default('dflt') }} {{ ''|default('dflt', true) }} {{ "
     "none|default('d') }} {{ 0|default('z', boolean=true) }}",
     "x  dflt None z"},
};

class ChatTemplateExpression : public ::testing::TestWithParam<Case> {};

TEST_P(ChatTemplateExpression, MatchesJinja2) {
  EXPECT_EQ(render_or_error(GetParam().source, sample_context()), GetParam().expected)
      << GetParam().source;
}

INSTANTIATE_TEST_SUITE_P(Literals, ChatTemplateExpression, ::testing::ValuesIn(kLiteralCases),
                         render_case_name);
INSTANTIATE_TEST_SUITE_P(Arithmetic, ChatTemplateExpression, ::testing::ValuesIn(kArithmeticCases),
                         render_case_name);
INSTANTIATE_TEST_SUITE_P(Comparisons, ChatTemplateExpression, ::testing::ValuesIn(kComparisonCases),
                         render_case_name);
INSTANTIATE_TEST_SUITE_P(Access, ChatTemplateExpression, ::testing::ValuesIn(kAccessCases),
                         render_case_name);
INSTANTIATE_TEST_SUITE_P(Methods, ChatTemplateExpression, ::testing::ValuesIn(kMethodCases),
                         render_case_name);
INSTANTIATE_TEST_SUITE_P(Undefined, ChatTemplateExpression, ::testing::ValuesIn(kUndefinedCases),
                         render_case_name);

}  // namespace
}  // namespace lpx::test
