#include "api.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <stdexcept>

#include <lpx/cpp/host.hpp>

#include "chat_page.hpp"
#include "generation_sinks.hpp"
#include "openai_names.hpp"
#include "websocket_protocols.hpp"

namespace lpx::http {
namespace {

namespace http = boost::beast::http;

constexpr const char* kJson = "application/json";

std::string json_status(const char* status) {
  return boost::json::serialize(boost::json::object{{"status", status}});
}

}  // namespace

namespace {

// The id /v1/models shows: the model_id option, else the model file's stem.
std::string model_id_of(const EngineHandle& engine, const HttpOptions& options) {
  if (!options.model_id.empty()) return options.model_id;
  const lpx_engine_info info = engine.info();
  return std::filesystem::path(info.model_path ? info.model_path : "model").stem().string();
}

}  // namespace

Api::Api(const EngineHandle& engine, const HttpOptions& options)
    : engine_(engine),
      options_(options),
      keys_(options.api_keys),
      model_id_(model_id_of(engine, options)),
      metrics_(model_id_) {
  const lpx_engine_info info = engine_.info();
  context_size_ = info.context_size;
  const bool gpu_backend = info.struct_size >= offsetof(lpx_engine_info, backend) + sizeof info.backend &&
                           info.backend != nullptr && std::string_view(info.backend) == "cuda";
  if (options.gpu_metrics == GpuMetrics::kOn ||
      (options.gpu_metrics == GpuMetrics::kAuto && gpu_backend)) {
    std::string why;
    gpu_gauges_ = GpuGauges::open(why);
    if (!gpu_gauges_ && options.gpu_metrics == GpuMetrics::kOn) {
      throw Error(LPX_ERR_UNAVAILABLE, "gpu_metrics = \"on\": " + why);
    }
    if (!gpu_gauges_) log_warn("no GPU gauges in /metrics: " + why);
  }
  max_sequences_ = info.max_sequences;
  const std::string_view chat_template = info.chat_template ? info.chat_template : "";
  tool_syntax_ = openai::detect_tool_syntax(chat_template);
  system_role_ = openai::template_takes_system_role(chat_template);
  created_ = std::chrono::duration_cast<std::chrono::seconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
}

std::string Api::endpoint_label(std::string_view path) {
  static constexpr std::string_view kRoutes[] = {
      "/",         "/health",    "/ready",         "/metrics",  "/v1/models",
      "/generate", "/tokenize",  "/detokenize",    "/v1/completions",
      "/v1/chat/completions",    "/v1/ws"};
  for (std::string_view route : kRoutes) {
    if (path == route) return std::string(route);
  }
  return "other";
}

std::string Api::cors_origin(std::string_view origin) const {
  if (origin.empty()) return {};
  for (const std::string& allowed : options_.cors_origins) {
    if (allowed == "*") return "*";
    if (allowed == origin) return allowed;
  }
  return {};
}

bool Api::authorized(const Request& request, const ApiKey* key) const {
  const std::string_view path(request.target().data(), request.target().size());
  const std::string_view route = path.substr(0, path.find('?'));
  if (route == "/" || route == "/health" || route == "/ready") return true;
  if (route == "/metrics" && options_.metrics_without_key) return true;
  return !keys_.required() || key != nullptr;
}

const ApiKey* Api::key_of(const Request& request) const {
  if (!keys_.required()) return nullptr;
  const auto it = request.find(http::field::authorization);
  if (const ApiKey* key = keys_.find(it == request.end() ? std::string_view() : std::string_view(it->value()))) {
    return key;
  }
  // A browser's WebSocket cannot carry headers: its key may come as a subprotocol instead.
  const std::string_view path(request.target().data(), request.target().size());
  if (path.substr(0, path.find('?')) != "/v1/ws") return nullptr;
  return keys_.find_in_websocket_protocols(offered_websocket_protocols(request));
}

void Api::admit(const ApiKey& key, AccessEntry& entry) {
  if (!key.limits.any()) return;
  if (const std::optional<LimitRefusal> refusal = limiter_->admit(key.id, key.limits)) {
    const int ms = static_cast<int>(std::min(refusal->wait_seconds * 1000.0 + 1.0, 86400e3));
    throw ApiError(429, "rate_limit_error",
                   std::string("rate limit reached for ") + refusal->what + " (" +
                       std::to_string(refusal->limit) + " per minute for key " + key.id +
                       "): try again in " + std::to_string((ms + 999) / 1000) + " s")
        .with_code(std::string("rate_limit_exceeded"))
        .with_retry_after_ms(ms);
  }
  if (key.limits.tokens_per_minute != 0) {
    entry.on_end = [limiter = limiter_, id = key.id, limits = key.limits](const AccessRecord& r) {
      limiter->charge_tokens(id, limits, r.prompt_tokens + r.completion_tokens);
    };
  }
}

void Api::handle(const Request& request, const std::shared_ptr<Exchange>& exchange, const ApiKey* key) {
  try {
    if (!authorized(request, key)) {
      throw ApiError(401, "authentication_error",
                     "a valid API key is required (Authorization: Bearer KEY)");
    }
    route(request, exchange, key);
  } catch (const ApiError& e) {
    exchange->respond_error(e);
  } catch (const std::exception& e) {
    log_error(std::string(request.method_string()) + " " +
              endpoint_label(std::string_view(request.target().data(), request.target().size())) + ": " + e.what());
    exchange->respond_error(ApiError(500, "server_error", "internal error"));
  }
}

void Api::route(const Request& request, const std::shared_ptr<Exchange>& exchange, const ApiKey* key) {
  const std::string_view target(request.target().data(), request.target().size());
  const std::string_view path = target.substr(0, target.find('?'));
  const bool get = request.method() == http::verb::get || request.method() == http::verb::head;
  const bool post = request.method() == http::verb::post;
  const std::string_view body = request.body();
  const auto wrong_method = [&](const char* allowed) {
    throw ApiError(405, "invalid_request_error", std::string("method not allowed; use ") + allowed);
  };

  if (path == "/health") {
    if (!get) wrong_method("GET");
    exchange->respond(200, json_status("ok"), kJson);
  } else if (path == "/ready") {
    if (!get) wrong_method("GET");
    if (draining_) {
      exchange->respond(503, json_status("draining"), kJson);
    } else {
      exchange->respond(200, json_status("ready"), kJson);
    }
  } else if (path == "/") {
    if (!get) wrong_method("GET");
    exchange->respond(200, std::string(chat_page_html()), "text/html; charset=utf-8");
  } else if (path == "/metrics") {
    if (!get) wrong_method("GET");
    std::string text = metrics_.render(engine_.stats());
    if (gpu_gauges_) gpu_gauges_->render(text);
    exchange->respond(200, std::move(text), "text/plain; version=0.0.4; charset=utf-8");
  } else if (path == "/v1/models") {
    if (!get) wrong_method("GET");
    models(*exchange);
  } else if (path == "/tokenize") {
    if (!post) wrong_method("POST");
    tokenize(body, *exchange);
  } else if (path == "/detokenize") {
    if (!post) wrong_method("POST");
    detokenize(body, *exchange);
  } else if (path == "/v1/completions") {
    if (!post) wrong_method("POST");
    generate(Endpoint::kCompletions, body, exchange, false, key);
  } else if (path == "/v1/chat/completions") {
    if (!post) wrong_method("POST");
    generate(Endpoint::kChat, body, exchange, false, key);
  } else if (path == "/generate") {
    if (!post) wrong_method("POST");
    generate(Endpoint::kGenerate, body, exchange, false, key);
  } else if (path == "/v1/ws") {
    throw bad_request("/v1/ws is a WebSocket endpoint: send an Upgrade request");
  } else {
    throw ApiError(404, "not_found_error", "no such endpoint");
  }
}

void Api::handle_websocket_message(std::string_view body, const std::shared_ptr<Exchange>& exchange,
                                   const ApiKey* key) {
  try {
    const boost::json::object object = parse_json_object(body);
    const Endpoint endpoint = object.contains("messages") ? Endpoint::kChat : Endpoint::kCompletions;
    generate(endpoint, body, exchange, true, key);
  } catch (const ApiError& e) {
    exchange->respond_error(e);
  } catch (const std::exception& e) {
    log_error(std::string("websocket message: ") + e.what());
    exchange->respond_error(ApiError(500, "server_error", "internal error"));
  }
}

void Api::generate(Endpoint endpoint, std::string_view body, const std::shared_ptr<Exchange>& exchange,
                   bool force_stream, const ApiKey* key) {
  if (draining_) {
    throw ApiError(503, "server_error", "the server is shutting down").with_retry_after(5);
  }
  const std::shared_ptr<AccessEntry> access = exchange->access();
  if (!access) throw std::logic_error("a generation request without an access-log entry");
  access->record.model = model_id_;
  access->record.generation = true;
  RequestLimits limits;
  limits.max_tokens = options_.max_tokens_limit != 0 ? options_.max_tokens_limit : context_size_;
  limits.tool_syntax = tool_syntax_;
  limits.system_role = system_role_;
  GenerationRequest request = parse_generation_request(parse_json_object(body), endpoint, limits);
  if (force_stream) request.stream = true;

  // Admission: running slots plus max_queued waiting; beyond that the client should come back.
  const lpx_engine_stats stats = engine_.stats();
  const std::uint64_t waiting = stats.waiting_requests +
                                (stats.running_requests >= max_sequences_ ? request.choice_count() : 0);
  if (waiting > options_.max_queued) {
    throw ApiError(429, "rate_limit_error", "the server is busy: the request queue is full").with_retry_after(1);
  }

  ResponseContext context = make_response_context(request, model_id_);
  const std::uint32_t choices = request.choice_count();
  std::shared_ptr<StreamingSink> streaming;
  std::shared_ptr<GenerationSink> sink;
  if (request.stream) {
    streaming = std::make_shared<StreamingSink>(exchange, std::move(context), choices, request.include_usage);
    sink = streaming;
  } else {
    sink = std::make_shared<CollectingSink>(exchange, std::move(context), choices);
  }
  // The key's limits last: a request refused for its body or a full queue spends none of them.
  if (key != nullptr) admit(*key, *access);
  auto generation = std::make_shared<Generation>(engine_, exchange->executor(), sink, metrics_, active_);
  generation->start(std::move(request), options_.request_timeout);  // throws a 400 if refused
  // Output is posted to this executor, so nothing arrives before the stream has begun.
  if (streaming) streaming->begin();
  exchange->watch_disconnect([weak = std::weak_ptr<Generation>(generation)] {
    if (auto g = weak.lock()) g->cancel();
  });
}

void Api::models(Exchange& exchange) const {
  boost::json::object model{{"id", model_id_},
                            {"object", "model"},
                            {"created", created_},
                            {"owned_by", "lpx"},
                            {"context_length", context_size_}};
  exchange.respond(200,
                   boost::json::serialize(boost::json::object{
                       {"object", "list"}, {"data", boost::json::array{std::move(model)}}}),
                   kJson);
}

void Api::tokenize(std::string_view body, Exchange& exchange) const {
  const boost::json::object object = parse_json_object(body);
  const JsonFields f(object);
  std::optional<std::string> text = f.string("text");
  if (!text) text = f.string("content");  // llama-server's name
  if (!text) field_error("text", "a string");
  std::uint32_t flags = 0;
  if (f.boolean("add_special").value_or(true)) flags |= LPX_TOKENIZE_ADD_SPECIAL;
  if (f.boolean("parse_special").value_or(false)) flags |= LPX_TOKENIZE_PARSE_SPECIAL;
  std::vector<std::int32_t> tokens;
  try {
    tokens = engine_.tokenize(*text, flags);
  } catch (const Error& e) {
    throw bad_request(e.what(), "text");
  }
  boost::json::object out{{"tokens", boost::json::value_from(tokens)}, {"count", tokens.size()}};
  if (f.boolean("with_pieces").value_or(false)) {
    boost::json::array pieces;
    for (std::int32_t t : tokens) {
      pieces.push_back(boost::json::string(engine_.detokenize({t}, LPX_DETOKENIZE_RENDER_SPECIAL)));
    }
    out["pieces"] = std::move(pieces);
  }
  exchange.respond(200, boost::json::serialize(out), kJson);
}

void Api::detokenize(std::string_view body, Exchange& exchange) const {
  const boost::json::object object = parse_json_object(body);
  const boost::json::value* list = JsonFields(object).find("tokens");
  if (list == nullptr || !list->is_array()) field_error("tokens", "an array of token ids");
  std::vector<std::int32_t> tokens;
  for (const boost::json::value& v : list->get_array()) {
    if (!v.is_int64() || v.get_int64() < 0 || v.get_int64() > INT32_MAX) {
      field_error("tokens", "an array of token ids in the vocabulary");
    }
    tokens.push_back(static_cast<std::int32_t>(v.get_int64()));
  }
  std::string text;
  try {
    text = engine_.detokenize(tokens, 0);
  } catch (const Error& e) {
    throw bad_request(e.what(), "tokens");
  }
  exchange.respond(200, boost::json::serialize(boost::json::object{{"text", text}}), kJson);
}

}  // namespace lpx::http
