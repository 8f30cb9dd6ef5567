// Chat templates: the Jinja2 dialect Hugging Face models ship in tokenizer_config.json, rendered
// the way transformers' apply_chat_template renders them (an ImmutableSandboxedEnvironment with
// trim_blocks, lstrip_blocks and loop controls; json.dumps-style tojson; raise_exception and
// strftime_now as globals), byte for byte. See docs/chat-templates.md for what is supported.
//
// Thread safety: a parsed ChatTemplate is immutable; render() may run on many threads at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "util/expected.hpp"

namespace lpx::core {

// Budgets and clock for one render. Templates are untrusted input: every budget turns a runaway
// template into an error instead of unbounded time or memory.
struct ChatTemplateRenderOptions {
  std::size_t max_output_bytes = std::size_t{16} << 20;
  // All loop iterations of one render together (a `for ... if` counts every item it tests).
  std::size_t max_loop_iterations = 1'000'000;
  int max_call_depth = 64;  // nested macro calls and recursive loop calls
  // Total size of the strings and lists the template computes during one render, counted as they
  // are made (so 'x' ~ 'y' in a loop adds up): bounds memory and time spent building values.
  std::size_t max_allocated_bytes = std::size_t{1} << 30;
  // The local time strftime_now() formats; unset means the current local time. Tests set it so
  // templates that print today's date render reproducibly.
  std::optional<std::chrono::local_seconds> fixed_time;
};

class ChatTemplate {
 public:
  // Parses a Jinja2 template (HF chat-template dialect). An unsupported construct is an error
  // naming the construct and the template line, e.g. "template line 3: unsupported filter
  // 'wordwrap'".
  static Expected<ChatTemplate> parse(std::string_view source);

  // Renders with `context`: a JSON object with at least "messages" (array of {role, content, ...}),
  // "add_generation_prompt" (bool), "bos_token", "eos_token"; any other keys (tools, date_string,
  // custom variables) are visible to the template too. raise_exception(msg) in the template
  // becomes an error whose text is exactly msg; other errors read "template line N: ...".
  Expected<std::string> render(const boost::json::object& context) const;
  Expected<std::string> render(const boost::json::object& context,
                               const ChatTemplateRenderOptions& options) const;

 private:
  struct Program;
  explicit ChatTemplate(std::shared_ptr<const Program> program) : program_(std::move(program)) {}

  std::shared_ptr<const Program> program_;
};

}  // namespace lpx::core
