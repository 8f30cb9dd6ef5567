#include "chat_template/chat_template.hpp"

#include <exception>
#include <new>

#include "chat_template/parser.hpp"
#include "chat_template/renderer.hpp"
#include "chat_template/scope_analysis.hpp"
#include "chat_template/template_error.hpp"

namespace lpx::core {

struct ChatTemplate::Program {
  jinja::Body body;
  jinja::BlockLocals block_locals;  // Jinja's compile-time scoping, see scope_analysis.hpp
};

Expected<ChatTemplate> ChatTemplate::parse(std::string_view source) {
  try {
    auto program = std::make_shared<Program>();
    program->body = jinja::parse_template(source);
    program->block_locals = jinja::analyze_block_locals(program->body);
    return ChatTemplate(std::move(program));
  } catch (const jinja::TemplateError& error) {
    return invalid_argument(error.describe());
  } catch (const std::bad_alloc&) {
    return fail(LPX_ERR_OUT_OF_MEMORY, std::string("out of memory while parsing the chat template"));
  } catch (const std::exception& error) {
    return internal_error(std::string("internal error while parsing the chat template: ") +
                      error.what());
  }
}

Expected<std::string> ChatTemplate::render(const boost::json::object& context) const {
  return render(context, ChatTemplateRenderOptions{});
}

Expected<std::string> ChatTemplate::render(const boost::json::object& context,
                                           const ChatTemplateRenderOptions& options) const {
  try {
    jinja::Renderer renderer(options);
    return renderer.render(program_->body, program_->block_locals, context);
  } catch (const jinja::RaisedException& raised) {
    return invalid_argument(raised.message());
  } catch (const jinja::TemplateError& error) {
    return invalid_argument(error.describe());
  } catch (const std::bad_alloc&) {
    return fail(LPX_ERR_OUT_OF_MEMORY, std::string("out of memory while rendering the chat template"));
  } catch (const std::exception& error) {
    return internal_error(std::string("internal error while rendering the chat template: ") +
                      error.what());
  }
}

}  // namespace lpx::core
