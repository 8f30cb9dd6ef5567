// stdio: chat with the pipeline's model in the terminal, with the model's chat template.
//
// Interactive (stdin is a terminal, or interactive = "always"): a multi-turn conversation, one
// engine session per conversation so each turn reuses the cached prefix. Piped (otherwise): all
// of stdin is one question and stdout gets only the answer, for shell pipelines:
//   echo "What is the capital of France?" | lpx-pipeline run pipelines/chat.toml
//
// request_stop (SIGINT from the host, any thread) cancels the answer being generated and wakes
// the stdin read through a self-pipe; run then ends with LPX_ERR_CANCELLED.
#include <unistd.h>

#include <lpx/cpp/engine.hpp>
#include <lpx/cpp/plugin.hpp>

#include "chat_setup.hpp"
#include "interactive_chat.hpp"
#include "piped_chat.hpp"
#include "request_canceller.hpp"
#include "stdio_options.hpp"
#include "stop_signal.hpp"

namespace lpx::stdio {
namespace {

class StdioTransport final : public Transport {
 public:
  explicit StdioTransport(const Options& options) : options_(StdioOptions::read(options)) {}

  void run(const lpx_run_context& context) override {
    const EngineHandle engine(context);  // throws when the pipeline has no [model]
    const lpx_engine_info info = engine.info();
    if (info.has_chat_template == 0) {
      throw Error(LPX_ERR_UNSUPPORTED,
                  std::string("the model ") + (info.model_name ? info.model_name : "") +
                      " has no chat template: set [model] chat_template in the pipeline to a "
                      "Jinja file");
    }
    if (stop_.raised()) throw_stopped();

    canceller_.attach(engine);
    struct Detach {
      RequestCanceller& canceller;
      ~Detach() { canceller.detach(); }
    } detach{canceller_};

    const ChatSetup setup{engine, canceller_, stop_, options_,
                          options_.stats || context.show_stats != 0};
    const bool interactive =
        options_.interactive == InteractiveMode::kAlways ||
        (options_.interactive == InteractiveMode::kAuto && isatty(STDIN_FILENO) == 1);
    if (interactive) {
      run_interactive_chat(setup);
    } else {
      run_piped_chat(setup);
    }
  }

  void request_stop() noexcept override {
    canceller_.stop();
    stop_.raise();
  }

 private:
  StdioOptions options_;
  StopSignal stop_;
  RequestCanceller canceller_;
};

constexpr const char* kCapabilities[] = {"transport:chat", "transport:streaming"};

}  // namespace
}  // namespace lpx::stdio

LPX_PLUGIN_ENTRY() {
  return lpx::describe<lpx::stdio::StdioTransport>(
      {.name = "stdio",
       .version = "1.0.0",
       .license = "Apache-2.0",
       .description = "Chat in the terminal (multi-turn), or answer a question piped to stdin",
       .options = lpx::stdio::stdio_option_schema(),
       .capabilities = lpx::stdio::kCapabilities});
}
