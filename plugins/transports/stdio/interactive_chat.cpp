#include "interactive_chat.hpp"

#include <unistd.h>

#include <string>
#include <string_view>

#include "chat_session.hpp"
#include "console.hpp"
#include "input_reader.hpp"
#include "stats_line.hpp"

namespace lpx::stdio {
namespace {

constexpr std::string_view kCommands =
    "commands: /reset (forget the conversation), /quit (or Ctrl-D) to leave, /help\n";

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

void greet(const EngineHandle& engine) {
  const lpx_engine_info info = engine.info();
  std::string text = "LPX chat with ";
  text += info.model_name != nullptr ? info.model_name : "the model";
  text += " (context " + std::to_string(info.context_size) +
          " tokens). Type a message, Enter sends it.\n";
  text += kCommands;
  write_err(text);
}

void check_output(bool ok) {
  if (!ok) throw Error(LPX_ERR_IO, "cannot write to stdout");
}

void report_failure(const std::string& message) {
  write_err("error: " + message + "\n(type /reset to start a new conversation)\n");
}

// One user turn: the answer streamed to stdout, then its newline (and statistics).
void answer(const ChatSetup& setup, ChatSession& chat, const std::string& question) {
  bool output_ok = true;
  bool printed = false;
  auto stream = [&](std::string_view piece) {
    printed = true;
    output_ok = write_out(piece);
    return output_ok;
  };
  GenerationResult result;
  try {
    result = chat.ask(question, stream);
  } catch (const Error& e) {  // refused at submit, e.g. a prompt longer than the context
    report_failure(e.what());
    return;
  }
  if (setup.canceller.stopped()) {
    if (printed) (void)write_out("\n");
    throw_stopped();
  }
  check_output(output_ok);
  if (result.finish_reason == LPX_FINISH_ERROR || result.finish_reason == LPX_FINISH_CANCELLED) {
    if (printed) check_output(write_out("\n"));
    report_failure(result.finish_reason == LPX_FINISH_ERROR
                       ? result.error
                       : std::string("the answer was cancelled"));
    return;
  }
  check_output(write_out("\n"));
  if (setup.show_stats) write_err(stats_line(result));
}

enum class CommandOutcome { kContinue, kQuit };

CommandOutcome run_command(std::string_view command, ChatSession& chat) {
  if (command == "/quit") return CommandOutcome::kQuit;
  if (command == "/reset") {
    chat.reset();
    write_err("conversation reset: the model forgot everything said so far\n");
  } else if (command == "/help") {
    write_err(kCommands);
  } else {
    write_err("unknown command '" + std::string(command) + "'; " + std::string(kCommands));
  }
  return CommandOutcome::kContinue;
}

}  // namespace

void run_interactive_chat(const ChatSetup& setup) {
  greet(setup.engine);
  ChatSession chat(setup.engine, setup.canceller, setup.options.system_prompt,
                   setup.options.max_tokens);
  InputReader input(STDIN_FILENO, setup.stop);
  std::string line;
  for (;;) {
    check_output(write_out("> "));
    const ReadResult read = input.read_line(line);
    if (read == ReadResult::kStopped) {
      (void)write_out("\n");
      throw_stopped();
    }
    if (read == ReadResult::kEnd) {  // Ctrl-D
      check_output(write_out("\n"));
      return;
    }
    const std::string_view text = trim(line);
    if (text.empty()) continue;
    if (text.front() == '/') {
      if (run_command(text, chat) == CommandOutcome::kQuit) return;
      continue;
    }
    answer(setup, chat, std::string(text));
  }
}

}  // namespace lpx::stdio
