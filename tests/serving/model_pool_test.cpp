// ModelPool with stand-in engines: loads counted, sizes chosen, failures on demand. The real
// engines behind it are exercised end to end in tests/http/test_models.py.
#include "serving/model_pool.hpp"

#include <cstddef>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "serving/models_c_api.hpp"

namespace lpx::core {
namespace {

using namespace std::chrono_literals;

constexpr std::uint64_t kMiB = 1 << 20;

// Counts the stand-in engines alive.
struct Counters {
  std::atomic<int> loads{0};
  std::atomic<int> alive{0};
};

struct FakeEngine {
  explicit FakeEngine(Counters& c) : counters(c) { ++counters.alive; }
  ~FakeEngine() { --counters.alive; }
  Counters& counters;
};

ServedModel fake(const std::string& name, std::uint64_t bytes, Counters& counters,
                 std::string definition = "v1", lpx_status_code fail_with = LPX_OK) {
  ServedModel m;
  m.name = name;
  m.path = name + ".gguf";
  m.definition = std::move(definition);
  m.estimated_bytes = bytes;
  m.load = [&counters, bytes, fail_with]() -> Expected<LoadedEngine> {
    ++counters.loads;
    if (fail_with != LPX_OK) return fail(fail_with, "cannot load on purpose");
    auto engine = std::make_shared<FakeEngine>(counters);
    LoadedEngine loaded;
    loaded.engine = reinterpret_cast<lpx_engine*>(engine.get());
    loaded.memory_bytes = bytes;
    loaded.owner = std::move(engine);
    return loaded;
  };
  return m;
}

struct Outcome {
  Expected<Lease> lease = internal_error(std::string("never called"));
  double retry_after_s = -1;
};

// Acquires and waits for the answer (which may come from the pool's loader thread).
Outcome acquire(ModelPool& pool, const std::string& name) {
  std::promise<Outcome> promise;
  pool.acquire(name, [&](Expected<Lease> lease, double retry) {
    promise.set_value(Outcome{std::move(lease), retry});
  });
  auto future = promise.get_future();
  EXPECT_EQ(future.wait_for(10s), std::future_status::ready);
  return future.get();
}

lpx_model_state state_of(const ModelPool& pool, const std::string& name) {
  lpx_model_state state = LPX_MODEL_UNLOADED;
  pool.list([&](const lpx_model_entry& e) {
    if (e.name == name) state = static_cast<lpx_model_state>(e.state);
  });
  return state;
}

PoolSettings settings(std::uint64_t budget_mib, std::chrono::milliseconds keep_alive = 1h) {
  PoolSettings s;
  s.budget_bytes = budget_mib * kMiB;
  s.keep_alive = keep_alive;
  return s;
}

TEST(ModelPool, TheDefaultLoadsAtConfigureAndAnswersAtOnce) {
  Counters c;
  ModelPool pool;
  ASSERT_TRUE(pool.configure({fake("a", kMiB, c), fake("b", kMiB, c)}, settings(0)));
  EXPECT_EQ(c.loads, 1);
  EXPECT_EQ(state_of(pool, "a"), LPX_MODEL_LOADED);
  EXPECT_EQ(state_of(pool, "b"), LPX_MODEL_UNLOADED);
  bool answered_inline = false;
  pool.acquire("", [&](Expected<Lease> lease, double) {
    ASSERT_TRUE(lease);
    EXPECT_EQ(*lease->name, "a");
    answered_inline = true;
    pool.release(lease->id);
  });
  EXPECT_TRUE(answered_inline);
}

TEST(ModelPool, AnotherModelLoadsOnItsFirstAcquireAndKeepsItsEngine) {
  Counters c;
  ModelPool pool;
  ASSERT_TRUE(pool.configure({fake("a", kMiB, c), fake("b", kMiB, c)}, settings(0)));
  Outcome first = acquire(pool, "b");
  ASSERT_TRUE(first.lease) << first.lease.error();
  Outcome second = acquire(pool, "b");
  ASSERT_TRUE(second.lease);
  EXPECT_EQ(first.lease->engine, second.lease->engine);
  EXPECT_EQ(first.lease->load_id, second.lease->load_id);
  EXPECT_EQ(c.loads, 2);
  pool.release(first.lease->id);
  pool.release(second.lease->id);
}

TEST(ModelPool, AnUnknownModelIsNotFoundAndTheMessageNamesTheServedOnes) {
  Counters c;
  ModelPool pool;
  ASSERT_TRUE(pool.configure({fake("a", kMiB, c), fake("b", kMiB, c)}, settings(0)));
  Outcome o = acquire(pool, "gpt-4");
  ASSERT_FALSE(o.lease);
  EXPECT_EQ(o.lease.error().code, LPX_ERR_NOT_FOUND);
  EXPECT_EQ(o.lease.error().field, "model");
  EXPECT_NE(o.lease.error().message.find("models: a, b"), std::string::npos) << o.lease.error();
}

TEST(ModelPool, AnIdleModelUnloadsAfterKeepAliveButTheDefaultStays) {
  Counters c;
  ModelPool pool;
  ASSERT_TRUE(pool.configure({fake("a", kMiB, c), fake("b", kMiB, c)}, settings(0, 50ms)));
  Outcome o = acquire(pool, "b");
  ASSERT_TRUE(o.lease);
  std::this_thread::sleep_for(150ms);
  EXPECT_EQ(state_of(pool, "b"), LPX_MODEL_LOADED) << "leased models never unload";
  pool.release(o.lease->id);
  // The state turns UNLOADED under the pool's lock; the engine is destroyed after it, outside
  // the lock: wait for both.
  for (int i = 0; i < 200 && (state_of(pool, "b") != LPX_MODEL_UNLOADED || c.alive != 1); ++i) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(state_of(pool, "b"), LPX_MODEL_UNLOADED);
  EXPECT_EQ(state_of(pool, "a"), LPX_MODEL_LOADED);
  EXPECT_EQ(c.alive, 1);
  Outcome again = acquire(pool, "b");
  ASSERT_TRUE(again.lease);
  EXPECT_NE(again.lease->load_id, o.lease->load_id);
  pool.release(again.lease->id);
}

TEST(ModelPool, ALoadUnloadsTheLeastRecentlyUsedIdleModelsToFitTheBudget) {
  Counters c;
  ModelPool pool;
  ASSERT_TRUE(pool.configure({fake("d", 10 * kMiB, c), fake("x", 40 * kMiB, c), fake("y", 40 * kMiB, c),
                              fake("z", 40 * kMiB, c)},
                             settings(100)));
  for (const char* name : {"x", "y"}) {
    Outcome o = acquire(pool, name);
    ASSERT_TRUE(o.lease);
    pool.release(o.lease->id);
  }
  EXPECT_EQ(pool.bytes_in_use(), 90 * kMiB);
  Outcome z = acquire(pool, "z");  // 130 MiB would not fit: x, used longest ago, goes
  ASSERT_TRUE(z.lease) << z.lease.error();
  EXPECT_EQ(state_of(pool, "x"), LPX_MODEL_UNLOADED);
  EXPECT_EQ(state_of(pool, "y"), LPX_MODEL_LOADED);
  EXPECT_EQ(pool.bytes_in_use(), 90 * kMiB);
  pool.release(z.lease->id);
}

TEST(ModelPool, AModelThatCannotFitBesideBusyOnesIsUnavailableWithATimeToRetry) {
  Counters c;
  ModelPool pool;
  ASSERT_TRUE(pool.configure({fake("d", 10 * kMiB, c), fake("x", 60 * kMiB, c), fake("y", 60 * kMiB, c)},
                             settings(100)));
  Outcome x = acquire(pool, "x");
  ASSERT_TRUE(x.lease);
  Outcome y = acquire(pool, "y");
  ASSERT_FALSE(y.lease);
  EXPECT_EQ(y.lease.error().code, LPX_ERR_UNAVAILABLE);
  EXPECT_GT(y.retry_after_s, 0);
  EXPECT_NE(y.lease.error().message.find("memory budget"), std::string::npos) << y.lease.error();
  EXPECT_EQ(c.loads, 2) << "nothing was loaded for the refused request";
  pool.release(x.lease->id);
  Outcome later = acquire(pool, "y");
  EXPECT_TRUE(later.lease) << later.lease.error();
  if (later.lease) pool.release(later.lease->id);
}

TEST(ModelPool, ARefusedLoadUnloadsNothing) {
  Counters c;
  ModelPool pool;
  ASSERT_TRUE(pool.configure({fake("d", 10 * kMiB, c), fake("busy", 50 * kMiB, c), fake("idle", 30 * kMiB, c),
                              fake("big", 45 * kMiB, c)},
                             settings(100)));
  Outcome busy = acquire(pool, "busy");
  Outcome idle = acquire(pool, "idle");
  ASSERT_TRUE(busy.lease && idle.lease);
  pool.release(idle.lease->id);
  // 10 + 50 + 45 > 100 even with the idle model gone: refused, and the idle one stays.
  EXPECT_FALSE(acquire(pool, "big").lease);
  EXPECT_EQ(state_of(pool, "idle"), LPX_MODEL_LOADED);
  pool.release(busy.lease->id);
}

TEST(ModelPool, LookingAtAModelDoesNotKeepItLoaded) {
  Counters c;
  ModelPool pool;
  ASSERT_TRUE(pool.configure({fake("d", kMiB, c), fake("x", kMiB, c)}, settings(0, 200ms)));
  Outcome x = acquire(pool, "x");
  ASSERT_TRUE(x.lease);
  pool.release(x.lease->id);
  // A scrape every 50 ms: each looks, none uses it.
  for (int i = 0; i < 20 && state_of(pool, "x") == LPX_MODEL_LOADED; ++i) {
    if (auto peek = pool.acquire_if_loaded("x")) pool.release(peek->id);
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(state_of(pool, "x"), LPX_MODEL_UNLOADED);
  EXPECT_FALSE(pool.acquire_if_loaded("x")) << "never loads";
  EXPECT_EQ(c.loads, 2);
}

TEST(ModelPool, ANewDefaultMayTakeTheIdleOldDefaultsPlaceInTheBudget) {
  Counters c;
  ModelPool pool;
  ASSERT_TRUE(pool.configure({fake("d", 60 * kMiB, c)}, settings(100)));
  ASSERT_TRUE(pool.configure({fake("d", 60 * kMiB, c, "v2")}, settings(100)))
      << "the old d is idle: it makes room for the new one";
  EXPECT_EQ(c.loads, 2);
  EXPECT_EQ(c.alive, 1);
  Outcome d = acquire(pool, "");
  ASSERT_TRUE(d.lease);
  auto busy = pool.configure({fake("d", 60 * kMiB, c, "v3")}, settings(100));
  ASSERT_FALSE(busy) << "the old d is busy: both do not fit";
  EXPECT_EQ(busy.error().code, LPX_ERR_UNAVAILABLE);
  pool.release(d.lease->id);
}

TEST(ModelPool, ARefusedReloadKeepsTheSettingsItHad) {
  Counters c;
  ModelPool pool;
  ASSERT_TRUE(pool.configure({fake("d", kMiB, c), fake("x", kMiB, c)}, settings(0, 1h)));
  auto refused = pool.configure({fake("broken", kMiB, c, "v1", LPX_ERR_IO), fake("x", kMiB, c)}, settings(0, 10ms));
  ASSERT_FALSE(refused);
  Outcome x = acquire(pool, "x");
  ASSERT_TRUE(x.lease);
  pool.release(x.lease->id);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(state_of(pool, "x"), LPX_MODEL_LOADED) << "keep_alive is still an hour";
}

TEST(ModelPool, AModelLargerThanTheWholeBudgetIsRefusedUpFront) {
  Counters c;
  ModelPool pool;
  auto configured = pool.configure({fake("d", 10 * kMiB, c), fake("big", 200 * kMiB, c)}, settings(100));
  ASSERT_FALSE(configured);
  EXPECT_EQ(configured.error().code, LPX_ERR_RESOURCE_EXHAUSTED);
  EXPECT_NE(configured.error().message.find("'big'"), std::string::npos);
  EXPECT_EQ(c.loads, 0);
}

TEST(ModelPool, ALoadThatRunsOutOfMemoryIsUnavailableAndOtherFailuresKeepTheirCode) {
  Counters c;
  ModelPool pool;
  ASSERT_TRUE(pool.configure({fake("d", kMiB, c), fake("oom", kMiB, c, "v1", LPX_ERR_OUT_OF_MEMORY),
                              fake("bad", kMiB, c, "v1", LPX_ERR_INVALID_ARGUMENT)},
                             settings(0)));
  Outcome oom = acquire(pool, "oom");
  ASSERT_FALSE(oom.lease);
  EXPECT_EQ(oom.lease.error().code, LPX_ERR_UNAVAILABLE);
  EXPECT_GT(oom.retry_after_s, 0);
  Outcome bad = acquire(pool, "bad");
  ASSERT_FALSE(bad.lease);
  EXPECT_EQ(bad.lease.error().code, LPX_ERR_INVALID_ARGUMENT);
  EXPECT_NE(bad.lease.error().message.find("model 'bad': cannot load on purpose"), std::string::npos);
  EXPECT_EQ(state_of(pool, "bad"), LPX_MODEL_UNLOADED);
}

TEST(ModelPool, AReloadKeepsUnchangedModelsAndRetiresChangedOnesAtTheirLastRelease) {
  Counters c;
  ModelPool pool;
  ASSERT_TRUE(pool.configure({fake("d", kMiB, c), fake("x", kMiB, c), fake("y", kMiB, c)}, settings(0)));
  Outcome d = acquire(pool, "d");
  Outcome x = acquire(pool, "x");
  ASSERT_TRUE(d.lease && x.lease);
  EXPECT_EQ(c.alive, 2);
  // d unchanged, x changed (held by a request), y gone, w new.
  ASSERT_TRUE(pool.configure({fake("d", kMiB, c), fake("x", kMiB, c, "v2"), fake("w", kMiB, c)}, settings(0)));
  EXPECT_EQ(c.loads, 2) << "the unchanged default kept its engine";
  EXPECT_EQ(c.alive, 2) << "the old x serves its request to the end";
  Outcome new_x = acquire(pool, "x");
  ASSERT_TRUE(new_x.lease);
  EXPECT_NE(new_x.lease->engine, x.lease->engine);
  EXPECT_EQ(c.alive, 3);
  pool.release(x.lease->id);
  EXPECT_EQ(c.alive, 2) << "the old x unloads at its last release";
  Outcome same_d = acquire(pool, "");
  ASSERT_TRUE(same_d.lease);
  EXPECT_EQ(same_d.lease->load_id, d.lease->load_id);
  EXPECT_FALSE(acquire(pool, "y").lease);
  for (const Outcome* o : {&d, &new_x, &same_d}) pool.release(o->lease->id);
}

TEST(ModelPool, AReloadCanMakeAServedModelTheDefaultWhileOthersAcquireIt) {
  Counters c;
  ModelPool pool;
  ASSERT_TRUE(pool.configure({fake("d", kMiB, c), fake("x", kMiB, c)}, settings(0, 20ms)));
  auto racing = std::async(std::launch::async, [&] { return acquire(pool, "x"); });
  ASSERT_TRUE(pool.configure({fake("x", kMiB, c), fake("d", kMiB, c)}, settings(0, 20ms)));
  Outcome raced = racing.get();
  ASSERT_TRUE(raced.lease) << raced.lease.error();
  pool.release(raced.lease->id);
  EXPECT_EQ(c.loads, 2) << "one load of x, shared";
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(state_of(pool, "x"), LPX_MODEL_LOADED) << "the new default stays";
  for (int i = 0; i < 200 && state_of(pool, "d") != LPX_MODEL_UNLOADED; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(state_of(pool, "d"), LPX_MODEL_UNLOADED) << "the old default unloads when idle";
  Outcome first = acquire(pool, "");
  ASSERT_TRUE(first.lease);
  EXPECT_EQ(*first.lease->name, "x");
  pool.release(first.lease->id);
}

TEST(ModelPool, AReloadWhoseDefaultCannotLoadChangesNothing) {
  Counters c;
  ModelPool pool;
  ASSERT_TRUE(pool.configure({fake("d", kMiB, c), fake("x", kMiB, c)}, settings(0)));
  auto configured = pool.configure({fake("broken", kMiB, c, "v1", LPX_ERR_IO), fake("x", kMiB, c)}, settings(0));
  ASSERT_FALSE(configured);
  EXPECT_NE(configured.error().message.find("model 'broken'"), std::string::npos);
  Outcome d = acquire(pool, "");
  ASSERT_TRUE(d.lease);
  EXPECT_EQ(*d.lease->name, "d");
  pool.release(d.lease->id);
}

TEST(ModelPool, AfterStopAcceptingEveryAcquireIsUnavailable) {
  Counters c;
  ModelPool pool;
  ASSERT_TRUE(pool.configure({fake("d", kMiB, c)}, settings(0)));
  pool.stop_accepting();
  Outcome o = acquire(pool, "d");
  ASSERT_FALSE(o.lease);
  EXPECT_EQ(o.lease.error().code, LPX_ERR_UNAVAILABLE);
}

TEST(ModelPool, ConcurrentAcquiresOfAnUnloadedModelShareOneLoad) {
  Counters c;
  ModelPool pool;
  ASSERT_TRUE(pool.configure({fake("d", kMiB, c), fake("x", kMiB, c)}, settings(0)));
  std::vector<std::future<Outcome>> outcomes;
  for (int i = 0; i < 8; ++i) {
    outcomes.push_back(std::async(std::launch::async, [&] { return acquire(pool, "x"); }));
  }
  for (auto& f : outcomes) {
    Outcome o = f.get();
    ASSERT_TRUE(o.lease);
    pool.release(o.lease->id);
  }
  EXPECT_EQ(c.loads, 2);
}

TEST(ModelPool, AdaptersAreListedAfterTheirModelAndLeasedByModelColonName) {
  Counters c;
  ModelPool pool;
  ServedModel a = fake("a:b", kMiB, c);  // a model name may hold ':' itself
  a.adapters = {{"sql", "a:b:sql", "sql.gguf"}, {"chat", "a:b:chat", "chat.gguf"}};
  ASSERT_TRUE(pool.configure({std::move(a), fake("c", kMiB, c)}, settings(0)));
  std::vector<std::pair<std::string, std::string>> listed;  // name, parent
  pool.list([&](const lpx_model_entry& e) { listed.emplace_back(e.name, e.parent ? e.parent : ""); });
  EXPECT_EQ(listed, (std::vector<std::pair<std::string, std::string>>{
                        {"a:b", ""}, {"a:b:sql", "a:b"}, {"a:b:chat", "a:b"}, {"c", ""}}));

  Outcome sql = acquire(pool, "a:b:sql");
  ASSERT_TRUE(sql.lease) << sql.lease.error();
  ASSERT_NE(sql.lease->adapter, nullptr);
  EXPECT_EQ(*sql.lease->adapter, "sql");
  EXPECT_EQ(*sql.lease->name, "a:b");
  Outcome plain = acquire(pool, "a:b");
  ASSERT_TRUE(plain.lease);
  EXPECT_EQ(plain.lease->adapter, nullptr);
  EXPECT_EQ(plain.lease->engine, sql.lease->engine) << "one engine serves the model and its adapters";
  Outcome missing = acquire(pool, "a:b:nope");
  ASSERT_FALSE(missing.lease);
  EXPECT_EQ(missing.lease.error().code, LPX_ERR_NOT_FOUND);
  EXPECT_NE(missing.lease.error().message.find("a:b:sql"), std::string::npos) << missing.lease.error();
  EXPECT_FALSE(acquire(pool, "c:sql").lease) << "an adapter belongs to its own model";
  pool.release(sql.lease->id);
  pool.release(plain.lease->id);
}

// The C table a transport built before ABI 2.7 gets: it cannot pass an adapter on, so it sees
// none and a name that selects one is refused, never answered by the model alone.
TEST(ModelPool, TransportsBuiltBeforeAdaptersNeitherSeeNorGetThem) {
  Counters c;
  ModelPool pool;
  ServedModel a = fake("a", kMiB, c);
  a.adapters = {{"sql", "a:sql", "sql.gguf"}};
  ASSERT_TRUE(pool.configure({std::move(a)}, settings(0)));
  lpx_models* models = to_c(pool);
  const auto names = [&](const lpx_models_api& api) {
    std::vector<std::string> out;
    api.list(models, [](void* user, const lpx_model_entry* e) {
      static_cast<std::vector<std::string>*>(user)->push_back(e->name);
    }, &out);
    return out;
  };
  EXPECT_EQ(names(models_c_api(7)), (std::vector<std::string>{"a", "a:sql"}));
  EXPECT_EQ(names(models_c_api(6)), (std::vector<std::string>{"a"}));

  struct Answer {
    std::int32_t code = -1;
    std::string adapter;
    std::uint64_t id = 0;
  };
  const auto acquire_c = [&](const lpx_models_api& api, const char* name) {
    Answer answer;
    api.acquire(models, name, [](void* user, const lpx_status* error, const lpx_model_lease* lease) {
      auto& out = *static_cast<Answer*>(user);
      out.code = error ? error->code : LPX_OK;
      if (!error) {
        out.adapter = lease->adapter ? lease->adapter : "";
        out.id = lease->id;
      }
    }, &answer);
    return answer;  // the model is loaded: answered inline
  };
  const Answer current = acquire_c(models_c_api(7), "a:sql");
  EXPECT_EQ(current.code, LPX_OK);
  EXPECT_EQ(current.adapter, "sql");
  models_c_api(7).release(models, current.id);
  EXPECT_EQ(acquire_c(models_c_api(6), "a:sql").code, LPX_ERR_UNSUPPORTED);
  const Answer base = acquire_c(models_c_api(6), "a");
  EXPECT_EQ(base.code, LPX_OK);
  models_c_api(6).release(models, base.id);

  lpx_model_lease old_lease{};
  old_lease.struct_size = offsetof(lpx_model_lease, adapter);  // as a 2.5 transport sizes it
  EXPECT_EQ(models_c_api(7).acquire_if_loaded(models, "a:sql", &old_lease), 0);
  EXPECT_EQ(models_c_api(7).acquire_if_loaded(models, "a", &old_lease), 1);
  models_c_api(7).release(models, old_lease.id);
  lpx_model_lease lease{};
  lease.struct_size = sizeof lease;
  ASSERT_EQ(models_c_api(7).acquire_if_loaded(models, "a:sql", &lease), 1);
  EXPECT_STREQ(lease.adapter, "sql");
  models_c_api(7).release(models, lease.id);
}

}  // namespace
}  // namespace lpx::core
