// http: an OpenAI-compatible HTTP API (and a chat page) over the pipeline's models, routed by
// each request's `model`, on Boost.Beast. See docs/http-server.md. The Server owns the network threads; run() blocks until
// request_stop (SIGINT/SIGTERM from the host), then drains and returns.
#include <atomic>
#include <memory>
#include <mutex>

#include <lpx/cpp/plugin.hpp>

#include "http_options.hpp"
#include "server.hpp"

namespace lpx::http {
namespace {

class HttpTransport final : public Transport {
 public:
  explicit HttpTransport(const Options& options) : options_(HttpOptions::read(options)) {}

  void run(const lpx_run_context& context) override {
    {
      std::lock_guard lock(mutex_);
      if (stop_requested_) return;
      server_ = std::make_unique<Server>(context, options_);  // throws without a model
    }
    server_->run();
    std::lock_guard lock(mutex_);
    server_.reset();
  }

  void request_stop() noexcept override {
    std::lock_guard lock(mutex_);
    stop_requested_ = true;
    if (server_) server_->stop();
  }

 private:
  HttpOptions options_;
  std::mutex mutex_;  // server_ and stop_requested_
  bool stop_requested_ = false;
  std::unique_ptr<Server> server_;
};

// transport:models: requests reach every model of the pipeline through lpx_run_context.models;
// transport:run-record: /v1/info shows lpx_run_context.run_record_json.
constexpr const char* kCapabilities[] = {"transport:http", "transport:openai", "transport:streaming",
                                         "transport:models", "transport:run-record"};

}  // namespace
}  // namespace lpx::http

LPX_PLUGIN_ENTRY() {
  return lpx::describe<lpx::http::HttpTransport>(
      {.name = "http",
       .version = "1.0.0",
       .license = "Apache-2.0",
       .description = "OpenAI-compatible HTTP API with streaming, metrics and a chat page",
       .options = lpx::http::http_option_schema(),
       .capabilities = lpx::http::kCapabilities});
}
