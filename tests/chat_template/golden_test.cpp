// Every case in golden/ rendered by the engine must equal what Python's jinja2 produced, byte for
// byte (tools/make_chat_template_goldens.py writes the cases).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "chat_template_test_support.hpp"

namespace lpx::test {
namespace {

namespace fs = std::filesystem;

struct GoldenCase {
  fs::path json;  // golden/<template>/<case>.json
  std::string name;
};

std::vector<GoldenCase> golden_cases() {
  std::vector<GoldenCase> cases;
  const fs::path root = chat_template_test_dir() / "golden";
  if (!fs::is_directory(root)) return cases;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".json") continue;
    std::string name =
        entry.path().parent_path().filename().string() + "__" + entry.path().stem().string();
    std::replace_if(
        name.begin(), name.end(),
        [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
    cases.push_back({entry.path(), name});
  }
  std::sort(cases.begin(), cases.end(),
            [](const GoldenCase& a, const GoldenCase& b) { return a.name < b.name; });
  return cases;
}

fs::path template_path(const std::string& reference) {
  const auto slash = reference.find('/');
  const std::string location = reference.substr(0, slash);
  const std::string name = reference.substr(slash + 1);
  if (location == "shared") return shared_templates_dir() / name;
  if (location == "builtin") {  // LPX's own copies (model/builtin_chat_templates.hpp)
    return fs::path(LPX_SOURCE_DIR) / "core" / "model" / "chat_templates" / name;
  }
  return chat_template_test_dir() / "templates" / name;
}

// "2025-03-14T09:26:53" as a local time.
std::chrono::local_seconds parse_time(const std::string& text) {
  using namespace std::chrono;
  const int y = std::stoi(text.substr(0, 4));
  const unsigned mo = static_cast<unsigned>(std::stoi(text.substr(5, 2)));
  const unsigned d = static_cast<unsigned>(std::stoi(text.substr(8, 2)));
  return local_days{year{y} / month{mo} / day{d}} + hours{std::stoi(text.substr(11, 2))} +
         minutes{std::stoi(text.substr(14, 2))} + seconds{std::stoi(text.substr(17, 2))};
}

class ChatTemplateGolden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(ChatTemplateGolden, RendersLikeJinja2) {
  const GoldenCase& golden = GetParam();
  const auto spec = boost::json::parse(read_file(golden.json)).as_object();
  const fs::path source_path = template_path(std::string(spec.at("template").as_string()));
  ASSERT_TRUE(fs::exists(source_path))
      << "template " << source_path
      << " is missing; the shared templates must be checked out next to the "
      << "repository (../shared/templates)";

  const auto parsed = core::ChatTemplate::parse(read_file(source_path));
  ASSERT_TRUE(parsed) << parsed.error();
  core::ChatTemplateRenderOptions options;
  options.fixed_time = parse_time(std::string(spec.at("fixed_time").as_string()));
  const auto rendered = parsed->render(spec.at("context").as_object(), options);

  fs::path expected_output = golden.json;
  expected_output.replace_extension(".out");
  fs::path expected_error = golden.json;
  expected_error.replace_extension(".error");
  if (fs::exists(expected_error)) {
    ASSERT_FALSE(rendered) << "expected the error '" << read_file(expected_error)
                           << "', got output:\n"
                           << *rendered;
    EXPECT_EQ(rendered.error().message, read_file(expected_error));
  } else {
    ASSERT_TRUE(rendered) << rendered.error();
    EXPECT_EQ(*rendered, read_file(expected_output));
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, ChatTemplateGolden, ::testing::ValuesIn(golden_cases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& test) {
                           return test.param.name;
                         });

TEST(ChatTemplateGoldenSet, SharedTemplatesArePresent) {
  ASSERT_TRUE(fs::is_directory(shared_templates_dir()))
      << "the shared chat templates are missing: expected them in " << shared_templates_dir()
      << " (CI checks them out next to the repository)";
  for (const char* name :
       {"HuggingFaceTB-SmolLM3-3B.jinja", "Qwen-Qwen2.5-7B-Instruct.jinja",
        "google-gemma-2-2b-it.jinja", "ibm-granite-granite-3.3-2B-Instruct.jinja",
        "meta-llama-Llama-3.2-3B-Instruct.jinja", "microsoft-Phi-3.5-mini-instruct.jinja"}) {
    EXPECT_TRUE(fs::exists(shared_templates_dir() / name))
        << name << " is missing from " << shared_templates_dir();
  }
}

// Every template (shared or local) has goldens, at least four cases each.
TEST(ChatTemplateGoldenSet, EveryTemplateHasCases) {
  std::map<std::string, int> cases_per_template;
  for (const GoldenCase& golden : golden_cases())
    ++cases_per_template[golden.json.parent_path().filename().string()];
  std::vector<fs::path> templates;
  if (fs::is_directory(shared_templates_dir())) {
    for (const auto& entry : fs::directory_iterator(shared_templates_dir()))
      templates.push_back(entry.path());
  }
  for (const auto& entry : fs::directory_iterator(chat_template_test_dir() / "templates"))
    templates.push_back(entry.path());
  ASSERT_GE(templates.size(), 7u);
  // Templates shared/ gained for the models of open issues, not yet rendered by LPX's engine
  // against jinja2 (tools/make_chat_template_goldens.py): LFM2/LFM2.5, Qwen3.5, Granite 4.0 and
  // Gemma 4 are issue 42's models; gpt-oss is outside LPX's size range. Each must still have no
  // goldens here, so the list shrinks as goldens arrive and a new shared template cannot slip by.
  const std::set<std::string> awaiting = {"LFM2-8B-A1B", "LFM2.5-Instruct", "Qwen3.5-4B",
                                          "ibm-granite-granite-4.0", "google-gemma-4-31B-it",
                                          "openai-gpt-oss-120b"};
  for (const fs::path& path : templates) {
    if (path.extension() != ".jinja") continue;
    const std::string name = path.stem().string();
    if (awaiting.contains(name)) {
      EXPECT_EQ(cases_per_template[name], 0) << name << " has goldens now: take it off the awaiting list";
      continue;
    }
    EXPECT_GE(cases_per_template[name], 4) << "too few golden cases for " << path.filename();
  }
}

}  // namespace
}  // namespace lpx::test
