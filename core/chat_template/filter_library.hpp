// The filter functions behind the table in filters.cpp, one namespace per file. Each takes the
// filtered value and the call's arguments. Names that are C++ keywords get a "_value" suffix.
#pragma once

#include "chat_template/arguments.hpp"
#include "chat_template/value.hpp"

namespace lpx::core::jinja {

namespace text_filters {  // filters_text.cpp
Value capitalize(const Value& input, const CallArguments& arguments);
Value center(const Value& input, const CallArguments& arguments);
Value default_value(const Value& input, const CallArguments& arguments);
Value escape(const Value& input, const CallArguments& arguments);
Value format(const Value& input, const CallArguments& arguments);
Value indent(const Value& input, const CallArguments& arguments);
Value lower(const Value& input, const CallArguments& arguments);
Value upper(const Value& input, const CallArguments& arguments);
Value replace(const Value& input, const CallArguments& arguments);
Value safe(const Value& input, const CallArguments& arguments);
Value string_value(const Value& input, const CallArguments& arguments);
Value title(const Value& input, const CallArguments& arguments);
Value tojson(const Value& input, const CallArguments& arguments);
Value trim(const Value& input, const CallArguments& arguments);
Value truncate(const Value& input, const CallArguments& arguments);
Value wordcount(const Value& input, const CallArguments& arguments);
}  // namespace text_filters

namespace number_filters {  // filters_number.cpp
Value abs_value(const Value& input, const CallArguments& arguments);
Value float_value(const Value& input, const CallArguments& arguments);
Value int_value(const Value& input, const CallArguments& arguments);
Value round_value(const Value& input, const CallArguments& arguments);
}  // namespace number_filters

namespace sequence_filters {  // filters_sequence.cpp
Value generator(const Value& input, const CallArguments& arguments);
Value ignore_case(const Value& input, const CallArguments& arguments);
Value min_or_max(const Value& input, const CallArguments& arguments);
Value attr(const Value& input, const CallArguments& arguments);
Value batch(const Value& input, const CallArguments& arguments);
Value dictsort(const Value& input, const CallArguments& arguments);
Value first(const Value& input, const CallArguments& arguments);
Value last(const Value& input, const CallArguments& arguments);
Value join(const Value& input, const CallArguments& arguments);
Value length(const Value& input, const CallArguments& arguments);
Value list(const Value& input, const CallArguments& arguments);
Value items(const Value& input, const CallArguments& arguments);
Value map(const Value& input, const CallArguments& arguments);
Value select(const Value& input, const CallArguments& arguments);
Value reject(const Value& input, const CallArguments& arguments);
Value selectattr(const Value& input, const CallArguments& arguments);
Value rejectattr(const Value& input, const CallArguments& arguments);
Value sort(const Value& input, const CallArguments& arguments);
Value unique(const Value& input, const CallArguments& arguments);
Value reverse(const Value& input, const CallArguments& arguments);
Value max(const Value& input, const CallArguments& arguments);
Value min(const Value& input, const CallArguments& arguments);
Value sum(const Value& input, const CallArguments& arguments);
}  // namespace sequence_filters

}  // namespace lpx::core::jinja
