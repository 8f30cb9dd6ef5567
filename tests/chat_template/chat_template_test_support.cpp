#include "chat_template_test_support.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace lpx::test {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

core::ChatTemplateRenderOptions test_render_options() {
  core::ChatTemplateRenderOptions options;
  options.fixed_time = golden_fixed_time();
  return options;
}

std::string render_or_error(std::string_view source, const boost::json::object& context,
                            const core::ChatTemplateRenderOptions& options) {
  const auto parsed = core::ChatTemplate::parse(source);
  if (!parsed) return "ERROR: " + parsed.error().message;
  const auto rendered = parsed->render(context, options);
  if (!rendered) return "ERROR: " + rendered.error().message;
  return *rendered;
}

const boost::json::object& sample_context() {
  // Keep in step with the context the expected values in the tests were computed with.
  static const boost::json::object context = boost::json::parse(R"({
    "d": {"a": 1, "b": [1, 2]},
    "s": "héllo",
    "n": null,
    "l": [3, 1, 2],
    "m": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": " yo "}],
    "f": 1.5,
    "t": true
  })")
                                                 .as_object();
  return context;
}

}  // namespace lpx::test
