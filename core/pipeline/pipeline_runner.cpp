#include "pipeline/pipeline_runner.hpp"

#include <spdlog/spdlog.h>

#include "engine/engine_c_api.hpp"
#include "pipeline/pipeline_text.hpp"
#include "serving/models_c_api.hpp"
#include "serving/served_models.hpp"

namespace lpx::core {

PipelineRunner::~PipelineRunner() {
  transport_.reset();
  if (default_lease_ && pool_) pool_->release(default_lease_->id);
  pool_.reset();  // stops every engine: they hold the backend and sampler instances
}

Expected<bool> PipelineRunner::serve_models(const Pipeline& pipeline) {
  auto models = served_models(pipeline, registry_);
  if (!models) return unexpected(models.error());
  if (models->empty()) {
    if (pool_) return invalid_argument(std::string("the pipeline no longer has a model"));
    return true;
  }
  if (models->size() > 1 && !transport_supports("transport:models")) {
    return invalid_argument("[transport] plugin '" + transport_->library().description().name +
                            "' serves one model, and [[models]] lists " +
                            std::to_string(models->size()) + ": use [model], or a transport "
                            "that routes requests by model (http)");
  }
  PoolSettings settings = pool_settings(pipeline);
  const bool automatic = !pipeline.engine.values.contains("memory_budget_mb") ||
                         std::get<std::int64_t>(pipeline.engine.values.at("memory_budget_mb")) == 0;
  if (automatic && budget_at_start_) settings.budget_bytes = *budget_at_start_;
  if (!pool_) pool_ = std::make_unique<ModelPool>();
  auto configured = pool_->configure(std::move(*models), settings);
  if (!configured) return unexpected(configured.error());
  if (automatic && !budget_at_start_) budget_at_start_ = settings.budget_bytes;
  return true;
}

Expected<bool> PipelineRunner::create_instances() {
  for (const PipelineSection& section : pipeline_.sections) {
    if (section.slot != "transport") continue;
    auto instance = section.plugin->create(section.options);
    if (!instance) return unexpected(instance.error().prefixed("[transport] "));
    spdlog::debug("created [transport] plugin '{}'", section.plugin->description().name);
    transport_ = std::move(*instance);
    transport_text_ = section_toml(section);
  }
  if (!transport_) return invalid_argument(std::string("the pipeline has no transport"));
  if (auto served = serve_models(pipeline_); !served) {
    transport_.reset();
    pool_.reset();
    return served;
  }
  if (pool_ && !transport_supports("transport:models")) {
    // The default model is loaded: this acquire answers at once.
    Expected<Lease> lease = internal_error(std::string("the default model did not answer"));
    pool_->acquire("", [&](Expected<Lease> l, double) { lease = std::move(l); });
    if (!lease) return unexpected(lease.error());
    default_lease_ = *lease;
  }
  return true;
}

Expected<bool> PipelineRunner::reload(const Pipeline& pipeline) {
  std::lock_guard lock(reload_mutex_);
  if (!transport_) return internal_error(std::string("reload() before create_instances()"));
  const PipelineSection* transport = pipeline.find("transport");
  if (transport == nullptr || section_toml(*transport) != transport_text_) {
    spdlog::warn("reload: [transport] changed; its options apply at the next start");
  }
  if (!pool_) return invalid_argument(std::string("the pipeline serves no model"));
  if (!transport_supports("transport:models")) {
    return unsupported("[transport] plugin '" + transport_->library().description().name +
                       "' holds its model for the whole run: restart to change models");
  }
  return serve_models(pipeline);
}

Expected<bool> PipelineRunner::run() {
  if (!transport_) return internal_error(std::string("run() before create_instances()"));
  lpx_run_context context{};
  context.struct_size = sizeof(lpx_run_context);
  context.pipeline_path = pipeline_.path.c_str();
  context.pipeline_name = pipeline_.name.c_str();
  context.engine = default_lease_ ? default_lease_->engine : nullptr;
  context.engine_api = pool_ ? &engine_c_api() : nullptr;
  context.show_stats = show_stats_ ? 1 : 0;
  const std::string resolved = resolved_pipeline_toml(pipeline_);
  context.resolved_pipeline = resolved.c_str();
  context.host_version = host_version_.c_str();
  context.host_commit = host_commit_.c_str();
  context.models = pool_ ? to_c(*pool_) : nullptr;
  context.models_api = pool_ ? &models_c_api(transport_->library().description().abi_minor) : nullptr;
  context.run_record_json = run_record_ ? run_record_->c_str() : nullptr;
  const auto& api = transport_->api<lpx_transport_api>();
  lpx_status* status = nullptr;
  try {
    status = api.run(transport_->raw(), &context);
  } catch (...) {
    return internal_error("transport '" + transport_->library().description().name +
                      "' threw a C++ exception across the C ABI");
  }
  if (pool_) pool_->stop_accepting();
  if (status == nullptr) return true;
  Status failure = take_status(status);
  if (failure.code == LPX_ERR_CANCELLED && stop_requested_.load()) return true;  // the stop we asked for
  if (failure.code == LPX_ERR_INCOMPLETE) return unexpected(std::move(failure).prefixed("interrupted: "));
  return unexpected(std::move(failure).with_context("transport '" + transport_->library().description().name + "'"));
}

void PipelineRunner::request_stop() noexcept {
  stop_requested_.store(true);
  if (pool_) pool_->stop_accepting();  // no model starts loading while the transport stops
  if (transport_) transport_->api<lpx_transport_api>().request_stop(transport_->raw());
}

}  // namespace lpx::core
