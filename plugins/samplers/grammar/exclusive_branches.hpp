// Whether the branches of a JSON Schema `oneOf` can never both match a value. xgrammar
// generates a oneOf as an anyOf unless it proves the branches disjoint itself, which it cannot
// for the usual discriminated unions; where this proof holds, anyOf and oneOf accept the same
// values and generating by anyOf keeps oneOf's meaning.
#pragma once

#include <boost/json.hpp>

namespace lpx::grammar {

// True when each branch (local $refs resolved against `root`) is a different single type
// (integer and number overlap), or when all are objects requiring one property whose const/enum
// values no two branches share (a discriminator).
bool provably_exclusive(const boost::json::array& branches, const boost::json::value& root);

}  // namespace lpx::grammar
