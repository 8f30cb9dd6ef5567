#include "model_routes.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace lpx::http {

ModelRoutes::ModelRoutes(const lpx_run_context& context, const HttpOptions& options, ServerMetrics& metrics)
    : state_(std::make_shared<State>(context, options.model_id, &metrics)) {}

ModelRoutes::~ModelRoutes() { close(); }

namespace {

std::size_t base_models(const std::vector<ModelListing>& models) {
  return static_cast<std::size_t>(
      std::count_if(models.begin(), models.end(), [](const ModelListing& m) { return m.parent.empty(); }));
}

}  // namespace

std::vector<ModelListing> ModelRoutes::list() const {
  std::vector<ModelListing> models = state_->models.list();
  if (base_models(models) == 1 && !state_->model_id.empty()) {
    // The one model goes by model_id, and so do its adapters: "ID:ADAPTER".
    for (ModelListing& m : models) {
      if (m.parent.empty()) {
        m.name = state_->model_id;
      } else {
        m.name = state_->model_id + m.name.substr(m.parent.size());
        m.parent = state_->model_id;
      }
    }
  }
  return models;
}

std::optional<lpx_engine_stats> ModelRoutes::stats_if_loaded(const ModelListing& model) const {
  if (model.state != LPX_MODEL_LOADED) return std::nullopt;
  // list() may show model_id in place of the one model's name: the default is that model.
  const std::string name = model.is_default ? std::string() : model.name;
  const std::shared_ptr<const ModelLease> lease = state_->models.acquire_if_loaded(name);
  if (!lease) return std::nullopt;
  return lease->engine().stats();
}

std::string ModelRoutes::State::id_of(const ModelLease& lease) const {
  std::string id = lease.name();
  if (!model_id.empty() && base_models(models.list()) == 1) id = model_id;
  return lease.adapter().empty() ? id : id + ":" + lease.adapter();
}

std::shared_ptr<const ModelFacts> ModelRoutes::State::facts_of(const ModelLease& lease) {
  auto& known = facts[lease.load_id()];
  if (!known) {
    // Loads come and go; requests of an old one keep their own copy.
    while (facts.size() > 64) facts.erase(facts.begin());
    const lpx_engine_info info = lease.engine().info();
    auto made = std::make_shared<ModelFacts>();
    made->context_size = info.context_size;
    made->max_sequences = info.max_sequences;
    const std::string_view chat_template = info.chat_template ? info.chat_template : "";
    made->tool_syntax = openai::detect_tool_syntax(chat_template);
    made->system_role = openai::template_takes_system_role(chat_template);
    made->backend = info.backend ? info.backend : "";
    known = std::move(made);
  }
  return known;
}

void ModelRoutes::State::answer(std::uint64_t route, ModelAcquisition a) {
  // Under the lock throughout: close() waits for a continuation that has begun.
  std::lock_guard lock(mutex);
  const auto it = waiting.find(route);
  if (!open || it == waiting.end()) return;  // closed: the lease (if any) goes back with `a`
  Done done = std::move(it->second);
  waiting.erase(it);
  if (!a.lease) {
    ApiError error = a.code == LPX_ERR_NOT_FOUND
                         ? ApiError(404, "invalid_request_error", a.message, "model").with_code("model_not_found")
                         : a.code == LPX_ERR_UNAVAILABLE ? ApiError(503, "server_error", a.message)
                                                         : ApiError(500, "server_error", a.message);
    if (a.code == LPX_ERR_UNAVAILABLE) {
      error.with_retry_after(std::max(1, static_cast<int>(std::ceil(a.retry_after_s))));
    }
    done(nullptr, &error);
    return;
  }
  auto routed = std::make_shared<RoutedModel>();
  routed->facts = facts_of(*a.lease);
  routed->id = id_of(*a.lease);
  routed->metrics = &metrics->model(routed->id);
  routed->lease = std::move(a.lease);
  done(std::move(routed), nullptr);
}

std::string ModelRoutes::routed_name(std::string_view requested) const {
  const std::vector<ModelListing> models = state_->models.list();
  if (base_models(models) != 1) return std::string(requested);
  // One model: every request is for it, whatever it calls it ("llama3:latest" included), unless
  // the model has adapters and the name is "MODEL:ADAPTER" (MODEL its name or model_id): that
  // goes on, to be refused when the adapter is not served, not quietly answered by the model.
  if (models.size() == 1) return std::string();
  for (const std::string& prefix : {models.front().name, state_->model_id}) {
    if (prefix.empty() || requested.size() <= prefix.size() || !requested.starts_with(prefix) ||
        requested[prefix.size()] != ':') {
      continue;
    }
    return models.front().name + std::string(requested.substr(prefix.size()));
  }
  return std::string();
}

void ModelRoutes::route(std::string_view requested, Done done) {
  const std::string name = routed_name(requested);
  std::uint64_t id = 0;
  {
    std::lock_guard lock(state_->mutex);
    if (!state_->open) {
      const ApiError stopping = server_shutting_down();
      done(nullptr, &stopping);
      return;
    }
    id = state_->next_id++;
    state_->waiting.emplace(id, std::move(done));
  }
  state_->models.acquire(name, [state = state_, id](ModelAcquisition a) { state->answer(id, std::move(a)); });
}

std::size_t ModelRoutes::waiting() const {
  std::lock_guard lock(state_->mutex);
  return state_->waiting.size();
}

std::vector<ModelRoutes::Done> ModelRoutes::close() {
  std::lock_guard lock(state_->mutex);
  state_->open = false;
  std::vector<Done> out;
  for (auto& [id, done] : state_->waiting) out.push_back(std::move(done));
  state_->waiting.clear();
  return out;
}

}  // namespace lpx::http
