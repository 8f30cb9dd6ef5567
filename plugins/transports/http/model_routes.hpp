// The models this server answers for, and which one a request gets: the one its `model` field
// names, the default when it names none, and with a single model served that one whatever the
// field says (clients that send a fixed name keep working), except "MODEL:ADAPTER", which
// selects one of the model's resident LoRA adapters. A routed model comes with what the
// API needs to know of it (context, tool-call syntax), worked out once per load.
//
// A route may wait for a model to load, on the host's loader thread. The request's continuation
// stays here, not in the host's callback, so that close() can take back every waiting one
// while the network threads still run: a load that ends after the server stopped finds nothing
// to call.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <lpx/cpp/models.hpp>

#include "http_options.hpp"
#include "metrics.hpp"
#include "openai_names.hpp"

namespace lpx::http {

// What the API reads from a model's engine once per load.
struct ModelFacts {
  std::uint32_t context_size = 0;
  std::uint32_t max_sequences = 0;
  openai::ToolSyntax tool_syntax = openai::ToolSyntax::kDescribedHermes;  // from the chat template
  bool system_role = true;                                                // likewise
  std::string backend;
};

// One request's hold on a model: the engine stays loaded while a copy lives.
struct RoutedModel {
  std::shared_ptr<const ModelLease> lease;
  std::shared_ptr<const ModelFacts> facts;
  std::string id;  // what responses and the access log call it
  ModelMetrics* metrics = nullptr;

  const EngineHandle& engine() const { return lease->engine(); }
};

class ModelRoutes {
 public:
  // `metrics` must outlive the routes.
  ModelRoutes(const lpx_run_context& context, const HttpOptions& options, ServerMetrics& metrics);
  ~ModelRoutes();  // close()s

  // Calls `done` once: with the model for `requested` ("" = the default), or with the ApiError
  // to answer (404 for a model not served, 503 with Retry-After when it cannot load now). From
  // the calling thread or the host's loader thread; never after close().
  using Done = std::function<void(std::shared_ptr<const RoutedModel>, const ApiError*)>;
  void route(std::string_view requested, Done done);

  // Routes still waiting for a load.
  std::size_t waiting() const;
  // Routes nothing more; returns the continuations of those still waiting (to be answered).
  std::vector<Done> close();

  // Every served model, the default first; ids as requests name them.
  std::vector<ModelListing> list() const;
  // The engine stats of served model `model` (as list() shows it) if it is loaded now.
  std::optional<lpx_engine_stats> stats_if_loaded(const ModelListing& model) const;

 private:
  // Shared with the host's callbacks, which may outlive these routes.
  struct State {
    State(const lpx_run_context& context, std::string id, ServerMetrics* m)
        : models(context), model_id(std::move(id)), metrics(m) {}

    ModelsHandle models;
    std::string model_id;  // HttpOptions::model_id
    ServerMetrics* metrics = nullptr;
    mutable std::mutex mutex;  // everything below
    bool open = true;
    std::uint64_t next_id = 0;
    std::map<std::uint64_t, Done> waiting;
    std::map<std::uint64_t, std::shared_ptr<const ModelFacts>> facts;  // by load id

    // What responses call the lease's model: its name (model_id for the one model), with
    // ":ADAPTER" when it runs with one.
    std::string id_of(const ModelLease& lease) const;
    std::shared_ptr<const ModelFacts> facts_of(const ModelLease& lease);  // under mutex
    void answer(std::uint64_t route, ModelAcquisition acquisition);
  };

  // The name acquired for `requested`.
  std::string routed_name(std::string_view requested) const;

  std::shared_ptr<State> state_;
};

}  // namespace lpx::http
