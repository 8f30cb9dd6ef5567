// The HTTP API: routes a parsed request to its endpoint, after authentication. Shared by every
// connection; thread-safe. See docs/http-server.md for the endpoints.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <boost/beast/http.hpp>
#include <lpx/cpp/engine.hpp>
#include <lpx/kinds/transport.h>

#include "api_keys.hpp"
#include "exchange.hpp"
#include "generation.hpp"
#include "gpu_gauges.hpp"
#include "openai_names.hpp"
#include "http_options.hpp"
#include "metrics.hpp"
#include "model_routes.hpp"

namespace lpx::http {

using Request = boost::beast::http::request<boost::beast::http::string_body>;

class Api {
 public:
  // Serves the models of `context` (lpx_run_context.models).
  Api(const lpx_run_context& context, const HttpOptions& options);

  // Answers `request`, which carries `key` (key_of), through `exchange` (now or later). Never
  // throws.
  void handle(const Request& request, const std::shared_ptr<Exchange>& exchange, const ApiKey* key);
  // Runs one generation body that arrived over a WebSocket (always streamed), from the client
  // whose upgrade carried `key` (nullptr: no key configured).
  void handle_websocket_message(std::string_view body, const std::shared_ptr<Exchange>& exchange,
                                const ApiKey* key);

  // The metrics label of a path: the route, or "other" (bounded label values).
  static std::string endpoint_label(std::string_view path);
  // Value for Access-Control-Allow-Origin when `origin` is allowed, else empty.
  std::string cors_origin(std::string_view origin) const;
  // The configured key `request` carries (its Authorization header, or for /v1/ws its
  // subprotocols), or nullptr. Looked up once per request by the connection.
  const ApiKey* key_of(const Request& request) const;
  // Whether `request`, carrying `key` (key_of), may be answered.
  bool authorized(const Request& request, const ApiKey* key) const;
  const HttpOptions& options() const noexcept { return options_; }

  void start_draining() noexcept { draining_ = true; }
  bool draining() const noexcept { return draining_; }
  // Requests the server still owes an answer: generating, or waiting for their model to load.
  std::size_t in_flight() const { return active_.count() + routes_.waiting() + starting_.load(); }
  // Ends routing (before the network threads stop): requests still waiting for a model's load
  // are answered 503.
  void stop_routing();
  ActiveGenerations& active() noexcept { return active_; }
  ServerMetrics& metrics() noexcept { return metrics_; }

 private:
  void route(const Request& request, const std::shared_ptr<Exchange>& exchange, const ApiKey* key);
  void generate(Endpoint endpoint, std::string_view body, const std::shared_ptr<Exchange>& exchange,
                bool force_stream, const ApiKey* key);
  // The rest of generate() once the request's model is held.
  void generate_with(const std::shared_ptr<const RoutedModel>& model, Endpoint endpoint,
                     const boost::json::object& body, const std::shared_ptr<Exchange>& exchange,
                     bool force_stream, const ApiKey* key);
  // Routes a request that names its model in `body`'s "model" to it, then runs `work` with it on
  // the exchange's executor; an error either way is the exchange's answer.
  void with_model(const boost::json::object& body, const std::shared_ptr<Exchange>& exchange,
                  std::function<void(const std::shared_ptr<const RoutedModel>&)> work);
  // Takes one request from `key`'s limits (throwing a 429 when they are spent) and arranges for
  // the tokens the request uses to be charged to them when it ends.
  void admit(const ApiKey& key, AccessEntry& entry);
  void models(Exchange& exchange) const;
  void info(Exchange& exchange) const;
  void render_metrics(Exchange& exchange);
  static void tokenize(const RoutedModel& model, const boost::json::object& body, Exchange& exchange);
  static void detokenize(const RoutedModel& model, const boost::json::object& body, Exchange& exchange);

  const HttpOptions& options_;
  ApiKeys keys_;
  std::int64_t created_ = 0;
  boost::json::object run_record_;  // the host's (lpx_run_context.run_record_json)
  ServerMetrics metrics_;
  ModelRoutes routes_;
  ActiveGenerations active_;
  // Shared with the access entries that charge tokens when their requests end, which may be
  // after the Api is gone (a generation finishing during shutdown).
  std::shared_ptr<RateLimiter> limiter_ = std::make_shared<RateLimiter>();
  std::unique_ptr<GpuGauges> gpu_gauges_;  // null: no GPU gauges
  std::atomic<bool> draining_{false};
  std::atomic<bool> routing_stopped_{false};
  std::atomic<std::size_t> starting_{0};  // routed, continuation not yet run on the executor
};

}  // namespace lpx::http
