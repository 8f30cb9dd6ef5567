#include "pipeline/pipeline_runner.hpp"

#include <spdlog/spdlog.h>

#include "engine/engine_builder.hpp"
#include "engine/engine_c_api.hpp"
#include "pipeline/pipeline_text.hpp"

namespace lpx::core {

PipelineRunner::~PipelineRunner() {
  transport_.reset();
  engine_.reset();  // joins the engine thread; it holds the backend and sampler instances
  while (!instances_.empty()) instances_.pop_back();  // reverse order of creation
}

Expected<bool> PipelineRunner::create_instances() {
  for (const PipelineSection& section : pipeline_.sections) {
    auto instance = section.plugin->create(section.options);
    if (!instance) {
      while (!instances_.empty()) instances_.pop_back();
      return unexpected(instance.error().prefixed("[" + section.slot + "] "));
    }
    spdlog::debug("created [{}] plugin '{}'", section.slot, section.plugin->description().name);
    if (section.slot == "transport") transport_ = *instance;
    instances_.push_back(std::move(*instance));
  }
  if (!transport_) return invalid_argument(std::string("the pipeline has no transport"));
  auto engine = build_pipeline_engine(pipeline_, instances_, registry_);
  if (!engine) {
    transport_.reset();
    while (!instances_.empty()) instances_.pop_back();
    return unexpected(engine.error());
  }
  engine_ = std::move(*engine);
  return true;
}

Expected<bool> PipelineRunner::run() {
  if (!transport_) return internal_error(std::string("run() before create_instances()"));
  lpx_run_context context{};
  context.struct_size = sizeof(lpx_run_context);
  context.pipeline_path = pipeline_.path.c_str();
  context.pipeline_name = pipeline_.name.c_str();
  context.engine = engine_ ? to_c(*engine_) : nullptr;
  context.engine_api = engine_ ? &engine_c_api() : nullptr;
  context.show_stats = show_stats_ ? 1 : 0;
  const std::string resolved = resolved_pipeline_toml(pipeline_);
  context.resolved_pipeline = resolved.c_str();
  context.host_version = host_version_.c_str();
  context.host_commit = host_commit_.c_str();
  const auto& api = transport_->api<lpx_transport_api>();
  lpx_status* status = nullptr;
  try {
    status = api.run(transport_->raw(), &context);
  } catch (...) {
    return internal_error("transport '" + transport_->library().description().name +
                      "' threw a C++ exception across the C ABI");
  }
  if (status == nullptr) return true;
  Status failure = take_status(status);
  if (failure.code == LPX_ERR_CANCELLED && stop_requested_.load()) return true;  // the stop we asked for
  if (failure.code == LPX_ERR_INCOMPLETE) return unexpected(std::move(failure).prefixed("interrupted: "));
  return unexpected(std::move(failure).with_context("transport '" + transport_->library().description().name + "'"));
}

void PipelineRunner::request_stop() noexcept {
  stop_requested_.store(true);
  if (transport_) transport_->api<lpx_transport_api>().request_stop(transport_->raw());
}

}  // namespace lpx::core
