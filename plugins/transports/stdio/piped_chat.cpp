#include "piped_chat.hpp"

#include <unistd.h>

#include <string>

#include "chat_session.hpp"
#include "console.hpp"
#include "input_reader.hpp"
#include "stats_line.hpp"

namespace lpx::stdio {
namespace {

// `echo question |` ends the text with a newline that is not part of the question.
void trim_one_newline(std::string& text) {
  if (!text.empty() && text.back() == '\n') {
    text.pop_back();
    if (!text.empty() && text.back() == '\r') text.pop_back();
  }
}

}  // namespace

void run_piped_chat(const ChatSetup& setup) {
  InputReader input(STDIN_FILENO, setup.stop);
  std::string question;
  if (input.read_all(question) == ReadResult::kStopped) throw_stopped();
  trim_one_newline(question);
  if (question.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw Error(LPX_ERR_INVALID_ARGUMENT,
                "stdin is empty: pipe a question in (echo \"Hi\" | lpx-pipeline run ...), or run "
                "in a terminal (or with interactive = \"always\") to chat");
  }

  ChatSession chat(setup.engine, setup.canceller, setup.options.system_prompt,
                   setup.options.max_tokens);
  bool output_ok = true;
  bool printed = false;
  const GenerationResult result = chat.ask(question, [&](std::string_view piece) {
    printed = true;
    output_ok = write_out(piece);
    return output_ok;
  });
  if (setup.canceller.stopped()) {
    if (printed) (void)write_out("\n");  // end the partial answer's line
    throw_stopped();
  }
  if (!output_ok) throw Error(LPX_ERR_IO, "cannot write the answer to stdout");
  if (result.finish_reason == LPX_FINISH_ERROR || result.finish_reason == LPX_FINISH_CANCELLED) {
    if (printed) (void)write_out("\n");
    if (result.finish_reason == LPX_FINISH_ERROR) throw Error(result.error_code, result.error);
    throw Error(LPX_ERR_CANCELLED, "the answer was cancelled");
  }
  if (!write_out("\n")) throw Error(LPX_ERR_IO, "cannot write the answer to stdout");
  if (setup.show_stats) write_err(stats_line(result));
}

}  // namespace lpx::stdio
