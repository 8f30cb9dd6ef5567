// The JSON Schemas inside a structural tag get the same audit as a schema on its own: a keyword
// the conversion would drop is refused wherever it sits (a tool's parameters, a tag's content).
#pragma once

#include <string>

namespace lpx::grammar {

// "" when every JSON Schema in `structural_tag_json` is honoured in full; else why not, naming
// the schema's place in the tag, e.g. "#/format/tags/0/content: keyword 'uniqueItems' at
// #/properties/tags is not supported". Malformed JSON is refused too.
std::string unsupported_structural_tag_schemas(const std::string& structural_tag_json);

}  // namespace lpx::grammar
