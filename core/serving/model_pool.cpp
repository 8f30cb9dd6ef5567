#include "serving/model_pool.hpp"

#include <algorithm>
#include <future>
#include <optional>
#include <utility>

#include <spdlog/spdlog.h>

namespace lpx::core {

struct ModelPool::Slot {
  ServedModel model;
  bool is_default = false;
  lpx_model_state state = LPX_MODEL_UNLOADED;
  LoadedEngine loaded;        // while LOADED
  std::uint64_t load_id = 0;  // of the current load
  std::uint64_t bytes = 0;    // measured at its last load, else the estimate
  std::uint32_t leases = 0;
  Clock::time_point idle_since = Clock::now();
  std::vector<AcquireCallback> waiting;  // acquisitions waiting for the load
};

namespace {

std::string mib(std::uint64_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }

}  // namespace

ModelPool::ModelPool() : worker_([this] { work(); }) {}

ModelPool::~ModelPool() {
  {
    std::lock_guard lock(mutex_);
    quitting_ = true;
  }
  wake_.notify_all();
  worker_.join();  // after a load in progress ends
  Unloads unloads;
  std::vector<AcquireCallback> waiting;
  {
    std::lock_guard lock(mutex_);
    for (auto& slot : load_queue_) {
      for (auto& w : slot->waiting) waiting.push_back(std::move(w));
    }
    for (auto& slot : slots_) unload_locked(*slot, unloads);
    for (auto& slot : retired_) unload_locked(*slot, unloads);
  }
  for (auto& w : waiting) w(unavailable("the server is stopping"), 0);
  unloads.clear();  // the engines stop here, unlocked
}

std::shared_ptr<ModelPool::Slot> ModelPool::find_locked(std::string_view name) const {
  if (slots_.empty()) return nullptr;
  if (name.empty()) return slots_.front();
  for (const auto& slot : slots_) {
    if (slot->model.name == name) return slot;
  }
  return nullptr;
}

std::string ModelPool::served_names_locked() const {
  std::string names;
  for (const auto& slot : slots_) {
    names += (names.empty() ? "" : ", ") + slot->model.name;
    for (const ServedAdapter& adapter : slot->model.adapters) names += ", " + adapter.listed;
  }
  return names;
}

std::uint64_t ModelPool::bytes_locked() const {
  std::uint64_t total = configuring_bytes_;
  for (const auto* list : {&slots_, &retired_}) {
    for (const auto& slot : *list) {
      if (slot->state != LPX_MODEL_UNLOADED) total += slot->bytes;
    }
  }
  return total;
}

std::uint64_t ModelPool::bytes_in_use() const {
  std::lock_guard lock(mutex_);
  return bytes_locked();
}

void ModelPool::unload_locked(Slot& slot, Unloads& unloads) {
  if (slot.state != LPX_MODEL_LOADED) return;
  spdlog::info("model '{}' unloaded ({} freed)", slot.model.name, mib(slot.bytes));
  unloads.push_back(std::move(slot.loaded.owner));
  slot.loaded = {};
  slot.state = LPX_MODEL_UNLOADED;
}

bool ModelPool::make_room_locked(std::uint64_t bytes, std::uint64_t budget, const Slot* except,
                                 bool defaults_too, Unloads& unloads) {
  if (budget == 0) return true;
  const auto evictable = [&](const Slot& slot) {
    return slot.state == LPX_MODEL_LOADED && slot.leases == 0 && &slot != except &&
           (defaults_too || !slot.is_default);
  };
  // Unload nothing unless unloading every idle model would make room.
  std::uint64_t idle = 0;
  for (const auto* list : {&retired_, &slots_}) {
    for (const auto& slot : *list) {
      if (evictable(*slot)) idle += slot->bytes;
    }
  }
  if (bytes_locked() - idle + bytes > budget) return false;
  while (bytes_locked() + bytes > budget) {
    Slot* oldest = nullptr;
    for (const auto* list : {&retired_, &slots_}) {
      for (const auto& slot : *list) {
        if (evictable(*slot) && (oldest == nullptr || slot->idle_since < oldest->idle_since)) oldest = slot.get();
      }
    }
    if (oldest == nullptr) return false;
    unload_locked(*oldest, unloads);
  }
  return true;
}

void ModelPool::install_locked(Slot& slot, LoadedEngine loaded) {
  slot.loaded = std::move(loaded);
  slot.bytes = slot.loaded.memory_bytes;  // measured from now on
  slot.load_id = next_load_++;
  slot.state = LPX_MODEL_LOADED;
}

std::pair<std::shared_ptr<ModelPool::Slot>, const std::string*> ModelPool::resolve_locked(
    std::string_view name) const {
  if (auto slot = find_locked(name)) return {slot, nullptr};
  // Model names may hold ':' themselves: try every split.
  for (std::size_t colon = name.find(':'); colon != std::string_view::npos; colon = name.find(':', colon + 1)) {
    auto slot = find_locked(name.substr(0, colon));
    if (!slot || colon == 0) continue;
    for (const ServedAdapter& adapter : slot->model.adapters) {
      if (adapter.name == name.substr(colon + 1)) return {slot, &adapter.name};
    }
  }
  return {nullptr, nullptr};
}

Lease ModelPool::lease_locked(const std::shared_ptr<Slot>& slot, bool peek) {
  const std::uint64_t id = next_lease_++;
  leases_.emplace(id, Held{slot, peek});
  ++slot->leases;
  return {id, slot->loaded.engine, &slot->model.name, slot->load_id};
}

Expected<bool> ModelPool::configure(std::vector<ServedModel> models, PoolSettings settings) {
  if (models.empty()) return invalid_argument("no model to serve");
  for (const ServedModel& m : models) {
    if (settings.budget_bytes != 0 && m.estimated_bytes > settings.budget_bytes) {
      return resource_exhausted("model '" + m.name + "' (" + m.path + ") needs about " +
                                mib(m.estimated_bytes) + ", more than the whole memory budget of " +
                                mib(settings.budget_bytes) + " ([engine] memory_budget_mb)");
    }
  }
  // Carry loaded slots over where nothing changed; make fresh ones for the rest.
  std::vector<std::shared_ptr<Slot>> next;
  {
    std::lock_guard lock(mutex_);
    for (ServedModel& m : models) {
      auto same = std::find_if(slots_.begin(), slots_.end(), [&](const auto& s) {
        return s->model.name == m.name && s->model.definition == m.definition;
      });
      if (same != slots_.end()) {
        next.push_back(*same);
      } else {
        auto slot = std::make_shared<Slot>();
        slot->bytes = m.estimated_bytes;
        slot->model = std::move(m);
        next.push_back(std::move(slot));
      }
    }
  }
  // The default loads here, before it is served, beside whatever runs now. Settings apply only
  // once nothing can fail.
  const std::shared_ptr<Slot>& first = next.front();
  bool served_already = false, loaded_already = false;
  {
    std::lock_guard lock(mutex_);
    served_already = std::find(slots_.begin(), slots_.end(), first) != slots_.end();
    loaded_already = first->state == LPX_MODEL_LOADED;
  }
  std::optional<Lease> held;  // a served model made the default: held until it is pinned
  if (served_already) {
    // Others may be acquiring it too: through the same path, sharing one load.
    std::promise<Expected<Lease>> answer;
    acquire(first->model.name, [&](Expected<Lease> lease, double) { answer.set_value(std::move(lease)); });
    Expected<Lease> lease = answer.get_future().get();
    if (!lease) return unexpected(lease.error());
    held = *lease;
  } else if (!loaded_already) {
    Unloads unloads;
    {
      std::lock_guard lock(mutex_);
      // The outgoing default may go to make room, when idle: it is served no longer as such.
      if (!make_room_locked(first->bytes, settings.budget_bytes, nullptr, true, unloads)) {
        return unavailable("the default model '" + first->model.name + "' (" + mib(first->bytes) +
                           ") does not fit in the memory budget of " + mib(settings.budget_bytes) +
                           " beside the models in use (" + mib(bytes_locked()) + ")");
      }
      first->state = LPX_MODEL_LOADING;
      configuring_bytes_ = first->bytes;  // not served yet (no one else sees it), but counted
    }
    unloads.clear();
    spdlog::info("loading model '{}' from {}", first->model.name, first->model.path);
    auto loaded = first->model.load();
    std::lock_guard lock(mutex_);
    configuring_bytes_ = 0;
    if (!loaded) {
      first->state = LPX_MODEL_UNLOADED;
      return unexpected(loaded.error().with_context("model '" + first->model.name + "'"));
    }
    install_locked(*first, std::move(*loaded));
  }
  Unloads unloads;
  {
    std::lock_guard lock(mutex_);
    for (auto& slot : slots_) {
      if (std::find(next.begin(), next.end(), slot) != next.end()) continue;
      slot->is_default = false;
      if (slot->leases == 0 && slot->state == LPX_MODEL_LOADED) {
        unload_locked(*slot, unloads);
      } else if (slot->state != LPX_MODEL_UNLOADED) {
        retired_.push_back(slot);  // unloads at its last release (or when its load ends)
      }
    }
    for (auto& slot : next) slot->is_default = slot == first;
    slots_ = std::move(next);
    settings_ = settings;
  }
  if (held) release(held->id);
  wake_.notify_all();  // keep_alive may have changed
  return true;
}

void ModelPool::list(const std::function<void(const lpx_model_entry&)>& visit) const {
  std::lock_guard lock(mutex_);
  const auto now = Clock::now();
  for (const auto& slot : slots_) {
    lpx_model_entry e{};
    e.struct_size = sizeof e;
    e.name = slot->model.name.c_str();
    e.path = slot->model.path.c_str();
    e.state = slot->state;
    e.is_default = slot->is_default ? 1 : 0;
    e.context_size = slot->model.context_size;
    e.leases = slot->leases;
    e.memory_bytes = slot->bytes;
    e.idle_seconds = slot->leases == 0 ? std::chrono::duration<double>(now - slot->idle_since).count() : 0;
    visit(e);
    for (const ServedAdapter& adapter : slot->model.adapters) {
      lpx_model_entry a = e;
      a.name = adapter.listed.c_str();
      a.path = adapter.path.c_str();
      a.is_default = 0;
      a.parent = slot->model.name.c_str();
      visit(a);
    }
  }
}

void ModelPool::acquire(std::string_view name, AcquireCallback done) {
  Unloads unloads;
  std::unique_lock lock(mutex_);
  const double retry = static_cast<double>(settings_.retry_after.count());
  if (!accepting_) {
    lock.unlock();
    done(unavailable("the server is stopping"), retry);
    return;
  }
  const auto [slot, adapter] = resolve_locked(name);
  if (!slot) {
    const std::string served = served_names_locked();
    lock.unlock();
    done(not_found("model '" + std::string(name) + "' is not served here; models: " + served, "model"), 0);
    return;
  }
  if (adapter != nullptr) {  // the lease says which adapter its name chose
    done = [inner = std::move(done), adapter](Expected<Lease> lease, double retry_after_s) {
      if (lease) lease->adapter = adapter;
      inner(std::move(lease), retry_after_s);
    };
  }
  if (slot->state == LPX_MODEL_LOADED) {
    Lease lease = lease_locked(slot, false);
    lock.unlock();
    done(lease, 0);
    return;
  }
  if (slot->state == LPX_MODEL_UNLOADED) {
    if (!make_room_locked(slot->bytes, settings_.budget_bytes, slot.get(), false, unloads)) {
      const std::string message =
          "model '" + slot->model.name + "' needs " + mib(slot->bytes) + " and the memory budget (" +
          mib(settings_.budget_bytes) + ") is held by models in use (" + mib(bytes_locked()) +
          "): try again when they are idle";
      lock.unlock();
      done(unavailable(message), retry);
      return;
    }
    slot->state = LPX_MODEL_LOADING;
    load_queue_.push_back(slot);
    wake_.notify_all();
  }
  slot->waiting.push_back(std::move(done));
  lock.unlock();
  unloads.clear();
}

std::optional<Lease> ModelPool::acquire_if_loaded(std::string_view name) {
  std::lock_guard lock(mutex_);
  const auto [slot, adapter] = resolve_locked(name);
  if (!accepting_ || !slot || slot->state != LPX_MODEL_LOADED) return std::nullopt;
  Lease lease = lease_locked(slot, true);
  lease.adapter = adapter;
  return lease;
}

void ModelPool::release(std::uint64_t lease_id) {
  Unloads unloads;
  {
    std::lock_guard lock(mutex_);
    const auto it = leases_.find(lease_id);
    if (it == leases_.end()) return;
    Slot& slot = *it->second.slot;
    const bool peek = it->second.peek;
    leases_.erase(it);
    if (--slot.leases > 0) return;
    if (!peek) slot.idle_since = Clock::now();  // a look at its stats is no use of it
    const auto retired = std::find_if(retired_.begin(), retired_.end(),
                                      [&](const auto& s) { return s.get() == &slot; });
    if (retired != retired_.end()) {
      unload_locked(slot, unloads);
      retired_.erase(retired);
    }
  }
  wake_.notify_all();  // the idle timer starts
}

void ModelPool::stop_accepting() noexcept {
  std::lock_guard lock(mutex_);
  accepting_ = false;
}

void ModelPool::load(const std::shared_ptr<Slot>& slot) {
  spdlog::info("loading model '{}' from {}", slot->model.name, slot->model.path);
  auto loaded = slot->model.load();
  std::vector<AcquireCallback> waiting;
  std::vector<Expected<Lease>> results;
  double retry = 0;
  Unloads unloads;
  {
    std::lock_guard lock(mutex_);
    waiting.swap(slot->waiting);
    if (loaded) {
      install_locked(*slot, std::move(*loaded));
      for (std::size_t i = 0; i < waiting.size(); ++i) results.emplace_back(lease_locked(slot, false));
      slot->idle_since = Clock::now();
      const auto retired = std::find(retired_.begin(), retired_.end(), slot);
      if (waiting.empty() && retired != retired_.end()) {
        unload_locked(*slot, unloads);
        retired_.erase(retired);
      }
    } else {
      slot->state = LPX_MODEL_UNLOADED;
      Status why = loaded.error().with_context("model '" + slot->model.name + "'");
      if (why.code == LPX_ERR_OUT_OF_MEMORY) {
        why.code = LPX_ERR_UNAVAILABLE;  // memory may free up: the client can come back
        retry = static_cast<double>(settings_.retry_after.count());
      }
      spdlog::error("{}", why.message);
      for (std::size_t i = 0; i < waiting.size(); ++i) results.emplace_back(unexpected(why));
    }
  }
  unloads.clear();
  for (std::size_t i = 0; i < waiting.size(); ++i) waiting[i](std::move(results[i]), retry);
}

void ModelPool::work() {
  std::unique_lock lock(mutex_);
  while (!quitting_) {
    if (!load_queue_.empty()) {
      const std::shared_ptr<Slot> slot = load_queue_.front();
      load_queue_.erase(load_queue_.begin());
      lock.unlock();
      load(slot);
      lock.lock();
      continue;
    }
    // Unload models idle for keep_alive; sleep until the next one would be.
    Unloads unloads;
    auto next_check = Clock::time_point::max();
    if (settings_.keep_alive.count() >= 0) {
      const auto now = Clock::now();
      for (auto& slot : slots_) {
        if (slot->is_default || slot->leases > 0 || slot->state != LPX_MODEL_LOADED) continue;
        const auto due = slot->idle_since + settings_.keep_alive;
        if (due <= now) {
          unload_locked(*slot, unloads);
        } else {
          next_check = std::min(next_check, due);
        }
      }
    }
    if (!unloads.empty()) {
      lock.unlock();
      unloads.clear();
      lock.lock();
      continue;
    }
    if (next_check == Clock::time_point::max()) {
      wake_.wait(lock);
    } else {
      wake_.wait_until(lock, next_check);
    }
  }
}

}  // namespace lpx::core
