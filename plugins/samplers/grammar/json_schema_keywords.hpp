// Which JSON Schema keywords the grammar link holds an output to. xgrammar converts a schema to
// a grammar but passes over some keywords with only a warning (uniqueItems, contains,
// multipleOf on numbers...); a field LPX does not honour must be refused, never dropped, so
// every schema is checked against this list first (docs/structured-output.md has the table).
#pragma once

#include <string>

namespace lpx::grammar {

// "" when every keyword of `schema_json` (a JSON Schema as text) is honoured; else why not,
// naming the first keyword refused and where it is, e.g. "keyword 'uniqueItems' at
// #/properties/tags is not supported". Malformed JSON is refused too.
std::string unsupported_schema_keywords(const std::string& schema_json);

}  // namespace lpx::grammar
