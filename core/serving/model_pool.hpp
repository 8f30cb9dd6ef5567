// The models a pipeline serves, loaded when needed and unloaded when idle, within a memory
// budget (lpx/models.h is the contract transports see; models_c_api.hpp adapts this class to it).
//
// Each served model is a slot: its recipe (how to load it), whether it is loaded, and how many
// leases hold its engine. The first model is the default: loaded by configure() and never
// unloaded for idleness. Another model loads on its first acquire, on the pool's worker thread
// (acquire never blocks its caller), and unloads keep_alive after its last lease, or at once
// when a load needs its memory. A load is admitted only when the model's bytes fit in the budget
// beside every loaded or loading model, after unloading idle ones, least recently used first;
// otherwise the acquire fails with LPX_ERR_UNAVAILABLE and a time to retry. configure() may be
// called again (a reload): slots whose name and definition are unchanged carry over with their
// engines; the others retire, and unload when their last lease is released.
//
// Threading: every public function is thread-safe. Callbacks and engine destruction run with no
// lock held. Destroy the pool after every lease is released.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "lpx/models.h"
#include "util/expected.hpp"
#include "util/status.hpp"

namespace lpx::core {

// A loaded model as the pool holds it: `owner` keeps the engine alive (dropping it unloads).
struct LoadedEngine {
  std::shared_ptr<void> owner;
  lpx_engine* engine = nullptr;
  std::uint64_t memory_bytes = 0;  // what it holds now: weights and KV cache
};

// A LoRA adapter served beside its model ([model] adapters): requests name it "MODEL:NAME".
struct ServedAdapter {
  std::string name;     // NAME
  std::string listed;   // "MODEL:NAME"
  std::string path;
};

// How to serve one model.
struct ServedModel {
  std::string name;  // what requests name it by
  std::string path;
  std::vector<ServedAdapter> adapters;
  std::uint32_t context_size = 0;
  // Identifies the configuration and the file's state: a reload keeps a loaded model only
  // when this is unchanged.
  std::string definition;
  std::uint64_t estimated_bytes = 0;  // before its first load
  std::function<Expected<LoadedEngine>()> load;
};

struct PoolSettings {
  std::uint64_t budget_bytes = 0;  // 0: no limit
  // Idle time before a model other than the default unloads; negative: never.
  std::chrono::milliseconds keep_alive{std::chrono::minutes(5)};
  // Suggested wait for a refused acquire (Retry-After).
  std::chrono::seconds retry_after{5};
};

struct Lease {
  std::uint64_t id = 0;
  lpx_engine* engine = nullptr;
  const std::string* name = nullptr;  // lives until the lease is released
  std::uint64_t load_id = 0;
  const std::string* adapter = nullptr;  // "MODEL:NAME" acquired: NAME (lives as `name`); else NULL
};

// Called once per acquire, with no lock held: a lease, or why none (and when to retry).
using AcquireCallback = std::function<void(Expected<Lease>, double retry_after_s)>;

class ModelPool {
 public:
  ModelPool();
  ~ModelPool();  // unloads everything; joins the worker
  ModelPool(const ModelPool&) = delete;
  ModelPool& operator=(const ModelPool&) = delete;

  // Serves `models` (at least one; names unique) from now on, loading the default (the first)
  // first if it is not loaded. Fails, changing nothing, when a model alone exceeds the budget
  // or the default cannot load.
  Expected<bool> configure(std::vector<ServedModel> models, PoolSettings settings);

  // `visit` sees every served model, the default first, each followed by its adapters, under
  // the pool's lock.
  void list(const std::function<void(const lpx_model_entry&)>& visit) const;
  // Leases model `name` ("" = the default; "MODEL:NAME" = MODEL with its adapter NAME); see
  // lpx_models_api.acquire.
  void acquire(std::string_view name, AcquireCallback done);
  void release(std::uint64_t lease_id);
  // A lease on model `name` if it is loaded now; never loads it, and its release leaves the
  // model's idle time running (for metrics).
  std::optional<Lease> acquire_if_loaded(std::string_view name);
  // New acquisitions fail with LPX_ERR_UNAVAILABLE from now on (the host is stopping).
  void stop_accepting() noexcept;

  // The bytes of loaded and loading models (for tests and logs).
  std::uint64_t bytes_in_use() const;

 private:
  struct Slot;
  using Clock = std::chrono::steady_clock;
  using Unloads = std::vector<std::shared_ptr<void>>;  // engines to destroy once unlocked

  std::shared_ptr<Slot> find_locked(std::string_view name) const;
  // The slot `name` leases and the adapter it selects (NULL: none); a NULL slot when neither a
  // model nor a "MODEL:ADAPTER" of this pool.
  std::pair<std::shared_ptr<Slot>, const std::string*> resolve_locked(std::string_view name) const;
  // `peek`: a look at the engine (its stats), which leaves the model's idle time running.
  Lease lease_locked(const std::shared_ptr<Slot>& slot, bool peek);
  // Unloads idle slots (least recently used first; the default too when `defaults_too`) until
  // `bytes` more fit in `budget`; whether they do. Unloads nothing when they cannot.
  bool make_room_locked(std::uint64_t bytes, std::uint64_t budget, const Slot* except, bool defaults_too,
                        Unloads& unloads);
  std::uint64_t bytes_locked() const;
  // A load that succeeded: the slot holds its engine and its measured size, with a new load id.
  void install_locked(Slot& slot, LoadedEngine loaded);
  void unload_locked(Slot& slot, Unloads& unloads);
  std::string served_names_locked() const;
  void load(const std::shared_ptr<Slot>& slot);  // worker thread
  void work();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  PoolSettings settings_;
  std::vector<std::shared_ptr<Slot>> slots_;              // served now, default first
  std::vector<std::shared_ptr<Slot>> retired_;            // replaced by a reload, still loaded
  struct Held {
    std::shared_ptr<Slot> slot;
    bool peek = false;
  };
  std::map<std::uint64_t, Held> leases_;
  std::vector<std::shared_ptr<Slot>> load_queue_;
  std::uint64_t configuring_bytes_ = 0;  // the default configure() is loading
  std::uint64_t next_lease_ = 1;
  std::uint64_t next_load_ = 1;
  bool accepting_ = true;
  bool quitting_ = false;
  std::thread worker_;
};

}  // namespace lpx::core
