// Seeded random templates (whitespace control, scoping, expressions and filters) rendered by
// Python's jinja2: the engine must print the same, or refuse what jinja2 refuses. The cases are
// written by tools/make_chat_template_goldens.py into differential/cases.json.
#include <gtest/gtest.h>

#include <string>

#include "chat_template_test_support.hpp"

namespace lpx::test {
namespace {

const boost::json::object& differential_document() {
  static const boost::json::object document =
      boost::json::parse(read_file(chat_template_test_dir() / "differential" / "cases.json"))
          .as_object();
  return document;
}

void check_kind(const std::string& kind) {
  const auto& document = differential_document();
  const auto& context = document.at("context").as_object();
  int checked = 0;
  for (const auto& entry : document.at("cases").as_array()) {
    const auto& test_case = entry.as_object();
    if (test_case.at("kind").as_string() != kind) continue;
    ++checked;
    const std::string source(test_case.at("template").as_string());
    const std::string result = render_or_error(source, context);
    if (test_case.contains("error")) {
      EXPECT_EQ(result.rfind("ERROR: ", 0), 0u) << "jinja2 refuses this template:\n"
                                                << source << "\nbut the engine printed:\n"
                                                << result;
    } else {
      EXPECT_EQ(result, std::string(test_case.at("expected").as_string())) << source;
    }
  }
  EXPECT_GT(checked, 100) << "too few '" << kind << "' cases in differential/cases.json";
}

TEST(ChatTemplateDifferential, WhitespaceControl) { check_kind("whitespace"); }
TEST(ChatTemplateDifferential, Scoping) { check_kind("scope"); }
TEST(ChatTemplateDifferential, Expressions) { check_kind("expression"); }

}  // namespace
}  // namespace lpx::test
