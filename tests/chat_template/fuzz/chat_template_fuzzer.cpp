// libFuzzer harness for the chat-template engine: any bytes as a template must parse to a
// template or an error, and rendering it must give output or an error: never a crash, a hang,
// unbounded memory, a leak or undefined behaviour (built with ASan + UBSan).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <boost/json.hpp>

#include "chat_template/chat_template.hpp"

namespace {

const boost::json::object& fuzz_context() {
  static const boost::json::object context = boost::json::parse(R"({
    "messages": [
      {"role": "system", "content": "Be brief. /no_think"},
      {"role": "user", "content": "Hé <b>\"there\"</b>\n"},
      {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Zürich", "days": 2}}}]},
      {"role": "tool", "content": {"temperature": 21.5, "ok": true}},
      {"role": "assistant", "content": "It is sunny."}
    ],
    "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}],
    "documents": null,
    "add_generation_prompt": true,
    "bos_token": "<s>",
    "eos_token": "</s>",
    "numbers": [3, -1, 2.5, 1e300, 0],
    "nested": {"a": {"b": {"c": [1, [2, [3]]]}}}
  })")
                                                 .as_object();
  return context;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  const auto parsed = lpx::core::ChatTemplate::parse(source);
  if (!parsed) return 0;
  lpx::core::ChatTemplateRenderOptions options;
  options.max_output_bytes = 1 << 20;
  options.max_loop_iterations = 20000;
  options.max_allocated_bytes = 32 << 20;
  options.max_call_depth = 32;
  using namespace std::chrono;
  options.fixed_time = local_days{year{2025} / March / 14} + hours{9};
  const auto rendered = parsed->render(fuzz_context(), options);
  volatile std::size_t sink = rendered ? rendered->size() : rendered.error().message.size();
  static_cast<void>(sink);
  return 0;
}
