// Chat templates LPX carries for architectures whose model files often come without one (a
// conversion of the base model, or an older converter): the model family's official template,
// used only when neither the pipeline ([model] chat_template) nor the file provides one, and
// always announced (engine_builder logs it; `inspect` shows it).
#pragma once

#include <optional>
#include <string_view>

namespace lpx::core {

struct BuiltinChatTemplate {
  std::string_view source;  // Jinja
  std::string_view origin;  // where it comes from, for logs: "LPX's built-in Gemma 3 template (...)"
};

std::optional<BuiltinChatTemplate> builtin_chat_template(std::string_view architecture);

}  // namespace lpx::core
