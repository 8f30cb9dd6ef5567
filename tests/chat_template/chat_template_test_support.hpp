// Helpers shared by the chat-template tests.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "chat_template/chat_template.hpp"

namespace lpx::test {

// One template rendered with sample_context(), and what jinja2 printed for it.
struct RenderCase {
  const char* name;
  const char* source;
  const char* expected;
};

// Shown by GoogleTest for a failing case (instead of the struct's bytes).
inline void PrintTo(const RenderCase& test_case, std::ostream* out) { *out << test_case.name; }

// Names each parameterised case after RenderCase::name.
inline std::string render_case_name(const ::testing::TestParamInfo<RenderCase>& info) {
  return info.param.name;
}

// The local time the golden files were made with (tools/make_chat_template_goldens.py).
inline std::chrono::local_seconds golden_fixed_time() {
  using namespace std::chrono;
  return local_days{year{2025} / March / 14} + hours{9} + minutes{26} + seconds{53};
}

// Where the shared model templates live (CI always has this folder).
inline std::filesystem::path shared_templates_dir() {
  return std::filesystem::path(LPX_SOURCE_DIR) / ".." / "shared" / "templates";
}

inline std::filesystem::path chat_template_test_dir() {
  return std::filesystem::path(LPX_SOURCE_DIR) / "tests" / "chat_template";
}

std::string read_file(const std::filesystem::path& path);

// Default options with strftime_now() pinned to golden_fixed_time().
core::ChatTemplateRenderOptions test_render_options();

// Parses and renders `source`; "ERROR: <message>" when parsing or rendering fails, so a test can
// compare one string either way.
std::string render_or_error(std::string_view source, const boost::json::object& context,
                            const core::ChatTemplateRenderOptions& options = test_render_options());

// The context the expression tests use (the same one the expected values were computed with).
const boost::json::object& sample_context();

}  // namespace lpx::test
