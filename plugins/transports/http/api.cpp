#include "api.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstddef>
#include <optional>
#include <stdexcept>

#include <boost/asio/post.hpp>
#include <lpx/cpp/host.hpp>

#include "chat_page.hpp"
#include "generation_sinks.hpp"
#include "openai_names.hpp"
#include "websocket_protocols.hpp"

namespace lpx::http {
namespace {

namespace http = boost::beast::http;

constexpr const char* kJson = "application/json";

const char* state_name(lpx_model_state state) {
  return state == LPX_MODEL_LOADED ? "loaded" : state == LPX_MODEL_LOADING ? "loading" : "unloaded";
}

std::string json_status(const char* status) {
  return boost::json::serialize(boost::json::object{{"status", status}});
}

}  // namespace

Api::Api(const lpx_run_context& context, const HttpOptions& options)
    : options_(options), keys_(options.api_keys), routes_(context, options, metrics_) {
  // The default model is loaded before the transport runs: this answers at once.
  std::string backend, failure = "no answer";
  routes_.route("", [&](std::shared_ptr<const RoutedModel> model, const ApiError* error) {
    if (error != nullptr) {
      failure = error->what();
    } else {
      backend = model->facts->backend;
      failure.clear();
    }
  });
  if (!failure.empty()) throw Error(LPX_ERR_UNAVAILABLE, "the default model: " + failure);
  if (options.gpu_metrics == GpuMetrics::kOn || (options.gpu_metrics == GpuMetrics::kAuto && backend == "cuda")) {
    std::string why;
    gpu_gauges_ = GpuGauges::open(why);
    if (!gpu_gauges_ && options.gpu_metrics == GpuMetrics::kOn) {
      throw Error(LPX_ERR_UNAVAILABLE, "gpu_metrics = \"on\": " + why);
    }
    if (!gpu_gauges_) log_warn("no GPU gauges in /metrics: " + why);
  }
  if (context.struct_size >= offsetof(lpx_run_context, run_record_json) + sizeof(void*) &&
      context.run_record_json != nullptr) {
    run_record_ = boost::json::parse(context.run_record_json).as_object();
    log_info("run record: " + std::string(context.run_record_json));
  }
  created_ = std::chrono::duration_cast<std::chrono::seconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
}

std::string Api::endpoint_label(std::string_view path) {
  static constexpr std::string_view kRoutes[] = {
      "/",         "/health",    "/ready",         "/metrics",  "/v1/models",  "/v1/info",
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
    render_metrics(*exchange);
  } else if (path == "/v1/models") {
    if (!get) wrong_method("GET");
    models(*exchange);
  } else if (path == "/v1/info") {
    if (!get) wrong_method("GET");
    info(*exchange);
  } else if (path == "/tokenize" || path == "/detokenize") {
    if (!post) wrong_method("POST");
    const bool to_tokens = path == "/tokenize";
    with_model(parse_json_object(body), exchange, [to_tokens, exchange, object = parse_json_object(body)](
                                                      const std::shared_ptr<const RoutedModel>& model) {
      if (to_tokens) {
        tokenize(*model, object, *exchange);
      } else {
        detokenize(*model, object, *exchange);
      }
    });
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

void Api::with_model(const boost::json::object& body, const std::shared_ptr<Exchange>& exchange,
                     std::function<void(const std::shared_ptr<const RoutedModel>&)> work) {
  const JsonFields f(body);
  std::optional<std::string> requested;
  if (const boost::json::value* field = f.find("model"); field != nullptr && !field->is_null()) {
    requested = f.string("model");
    if (!requested) field_error("model", "a string");
  }
  if (draining_) {
    throw server_shutting_down();
  }
  routes_.route(requested.value_or(""), [this, exchange, work = std::move(work)](
                                            std::shared_ptr<const RoutedModel> model, const ApiError* error) {
    std::optional<ApiError> refusal;
    if (error != nullptr) refusal = *error;
    // On the exchange's executor: the connection's strand, where its answer is written. Counted
    // in flight until it has run, so the server does not stop under it.
    ++starting_;
    boost::asio::post(exchange->executor(), [this, exchange, work, model = std::move(model), refusal]() {
      struct Started {
        std::atomic<std::size_t>& count;
        ~Started() { --count; }
      } started{starting_};
      try {
        if (refusal) throw *refusal;
        if (routing_stopped_) {
          throw server_shutting_down();
        }
        work(model);
      } catch (const ApiError& e) {
        exchange->respond_error(e);
      } catch (const std::exception& e) {
        log_error(std::string("request: ") + e.what());
        exchange->respond_error(ApiError(500, "server_error", "internal error"));
      }
    });
  });
}

void Api::stop_routing() {
  routing_stopped_ = true;
  const ApiError stopping = server_shutting_down();
  for (ModelRoutes::Done& done : routes_.close()) done(nullptr, &stopping);
}

void Api::generate(Endpoint endpoint, std::string_view body, const std::shared_ptr<Exchange>& exchange,
                   bool force_stream, const ApiKey* key) {
  if (draining_) {
    throw server_shutting_down();
  }
  const std::shared_ptr<AccessEntry> access = exchange->access();
  if (!access) throw std::logic_error("a generation request without an access-log entry");
  access->record.generation = true;
  auto object = std::make_shared<const boost::json::object>(parse_json_object(body));
  // What the client asked for, in the log even when no model answers it.
  if (const auto it = object->find("model"); it != object->end() && it->value().is_string()) {
    access->record.model = std::string(it->value().get_string());
  }
  // The key's identity is the connection's; the Api outlives every request.
  with_model(*object, exchange, [this, endpoint, object, exchange, force_stream, key](
                                    const std::shared_ptr<const RoutedModel>& model) {
    generate_with(model, endpoint, *object, exchange, force_stream, key);
  });
}

void Api::generate_with(const std::shared_ptr<const RoutedModel>& model, Endpoint endpoint,
                        const boost::json::object& body, const std::shared_ptr<Exchange>& exchange,
                        bool force_stream, const ApiKey* key) {
  const std::shared_ptr<AccessEntry> access = exchange->access();
  if (!access) return;  // the client went away while its model loaded
  access->record.model = model->id;
  const ModelFacts& facts = *model->facts;
  RequestLimits limits;
  limits.max_tokens = options_.max_tokens_limit != 0 ? options_.max_tokens_limit : facts.context_size;
  limits.tool_syntax = facts.tool_syntax;
  limits.system_role = facts.system_role;
  GenerationRequest request = parse_generation_request(body, endpoint, limits);
  request.adapter = model->lease->adapter();
  if (force_stream) request.stream = true;

  // Admission: running slots plus max_queued waiting; beyond that the client should come back.
  const lpx_engine_stats stats = model->engine().stats();
  const std::uint64_t waiting = stats.waiting_requests +
                                (stats.running_requests >= facts.max_sequences ? request.choice_count() : 0);
  if (waiting > options_.max_queued) {
    throw ApiError(429, "rate_limit_error", "the server is busy: the request queue is full").with_retry_after(1);
  }

  ResponseContext context = make_response_context(request, model->id);
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
  auto generation = std::make_shared<Generation>(model, exchange->executor(), sink, active_);
  generation->start(std::move(request), options_.request_timeout);  // throws a 400 if refused
  // Output is posted to this executor, so nothing arrives before the stream has begun.
  if (streaming) streaming->begin();
  exchange->watch_disconnect([weak = std::weak_ptr<Generation>(generation)] {
    if (auto g = weak.lock()) g->cancel();
  });
}

void Api::render_metrics(Exchange& exchange) {
  // Loaded models' live numbers; an unloaded model is not loaded for them.
  std::vector<ModelSample> samples;
  for (const ModelListing& m : routes_.list()) {
    ModelSample sample;
    sample.name = m.name;
    sample.memory_bytes = m.memory_bytes;
    sample.metrics = &metrics_.model(m.name);
    sample.adapter = !m.parent.empty();
    if (!sample.adapter) sample.engine = routes_.stats_if_loaded(m);
    samples.push_back(std::move(sample));
  }
  std::string text = metrics_.render(samples);
  if (gpu_gauges_) gpu_gauges_->render(text);
  exchange.respond(200, std::move(text), "text/plain; version=0.0.4; charset=utf-8");
}

void Api::models(Exchange& exchange) const {
  boost::json::array data;
  for (const ModelListing& m : routes_.list()) {
    boost::json::object entry{{"id", m.name},
                              {"object", "model"},
                              {"created", created_},
                              {"owned_by", "lpx"},
                              {"context_length", m.context_size},
                              {"status", state_name(m.state)},
                              {"default", m.is_default}};
    if (!m.parent.empty()) {  // a LoRA adapter, as vLLM lists them: its base and its file
      entry["parent"] = m.parent;
      entry["root"] = m.path;
    }
    data.push_back(std::move(entry));
  }
  exchange.respond(200,
                   boost::json::serialize(boost::json::object{{"object", "list"}, {"data", std::move(data)}}),
                   kJson);
}

void Api::info(Exchange& exchange) const {
  // The record as the server started, and the models as they are now (a reload changes them).
  boost::json::object out = run_record_;
  boost::json::array now;
  for (const ModelListing& m : routes_.list()) {
    now.push_back(boost::json::object{{"name", m.name},
                                      {"path", m.path},
                                      {"status", state_name(m.state)},
                                      {"default", m.is_default},
                                      {"context_length", m.context_size},
                                      {"memory_bytes", m.memory_bytes},
                                      {"requests_holding", m.leases},
                                      {"parent", m.parent.empty() ? boost::json::value() : boost::json::value(m.parent)}});
  }
  out["served_models"] = std::move(now);
  exchange.respond(200, boost::json::serialize(out), kJson);
}

void Api::tokenize(const RoutedModel& model, const boost::json::object& object, Exchange& exchange) {
  const JsonFields f(object);
  std::optional<std::string> text = f.string("text");
  if (!text) text = f.string("content");  // llama-server's name
  if (!text) field_error("text", "a string");
  std::uint32_t flags = 0;
  if (f.boolean("add_special").value_or(true)) flags |= LPX_TOKENIZE_ADD_SPECIAL;
  if (f.boolean("parse_special").value_or(false)) flags |= LPX_TOKENIZE_PARSE_SPECIAL;
  std::vector<std::int32_t> tokens;
  try {
    tokens = model.engine().tokenize(*text, flags);
  } catch (const Error& e) {
    throw bad_request(e.what(), "text");
  }
  boost::json::object out{{"tokens", boost::json::value_from(tokens)}, {"count", tokens.size()}};
  if (f.boolean("with_pieces").value_or(false)) {
    boost::json::array pieces;
    for (std::int32_t t : tokens) {
      pieces.push_back(boost::json::string(model.engine().detokenize({t}, LPX_DETOKENIZE_RENDER_SPECIAL)));
    }
    out["pieces"] = std::move(pieces);
  }
  exchange.respond(200, boost::json::serialize(out), kJson);
}

void Api::detokenize(const RoutedModel& model, const boost::json::object& object, Exchange& exchange) {
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
    text = model.engine().detokenize(tokens, 0);
  } catch (const Error& e) {
    throw bad_request(e.what(), "tokens");
  }
  exchange.respond(200, boost::json::serialize(boost::json::object{{"text", text}}), kJson);
}

}  // namespace lpx::http
