// The per-token decode loop does no heap allocation: every operator new in the process is
// counted while the engine produces tokens 4..24 of an answer (forward pass, sampling, text
// decoding, stop matching and the callback: the whole loop on the engine thread).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "engine_test_support.hpp"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, std::align_val_t align) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  const auto a = static_cast<std::size_t>(align);
  if (void* p = std::aligned_alloc(a, (size + a - 1) / a * a)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t align) { return operator new(size, align); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace lpx::test {
namespace {

struct Window {
  int seen = 0;
  long allocations = -1;
};

void run_window(core::Engine& engine, const char* prompt) {
  Window w;
  lpx_request r{};
  r.struct_size = sizeof(r);
  r.prompt = prompt;
  r.max_tokens = 30;
  r.user = &w;
  r.on_token = [](void* u, const lpx_token_event*) -> int32_t {
    auto& window = *static_cast<Window*>(u);
    ++window.seen;
    if (window.seen == 4) {
      g_allocations = 0;
      g_counting = true;
    } else if (window.seen == 24) {
      g_counting = false;
      window.allocations = g_allocations.load();
    }
    return 0;
  };
  r.on_done = [](void*, const lpx_request_result*) { g_counting = false; };
  auto id = engine.submit(r);
  ASSERT_TRUE(id.has_value()) << id.error();
  engine.wait(*id);
  ASSERT_GE(w.seen, 24) << "the answer ended before the measured window";
  EXPECT_EQ(w.allocations, 0) << "heap allocations during 20 decode steps";
}

TEST(NoAllocation, TheCounterSeesAllocations) {
  g_allocations = 0;
  g_counting = true;
  auto* probe = new std::vector<int>(1000);
  g_counting = false;
  delete probe;
  EXPECT_GE(g_allocations.load(), 2) << "the counting operator new is not in use";
}

TEST(NoAllocation, TheDecodeLoopDoesNotAllocate) {
  if (!std::filesystem::exists(smollm2_path())) GTEST_SKIP() << "run tools/setup.sh first";
  TestHost host;
  core::EngineConfig config;
  config.context_size = 256;
  auto engine = host.engine(smollm2_path(), "cpu", {"penalties", "top-k", "top-p", "min-p", "temperature", "dist"}, config);
  ASSERT_NE(engine, nullptr);
  run_window(*engine, "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,");
}

// Speculative decoding too: drafting (from the text, or from a draft model with its own cache)
// and verifying the drafts.
TEST(NoAllocation, SpeculativeDecodingDoesNotAllocate) {
  if (!std::filesystem::exists(smollm2_path())) GTEST_SKIP() << "run tools/setup.sh first";
  for (const bool draft_model : {false, true}) {
    SCOPED_TRACE(draft_model ? "draft model" : "ngram");
    TestHost host;
    core::EngineConfig config;
    config.context_size = 256;
    config.max_draft = 4;
    config.ngram = 2;  // counting on: ", 1" and the like recur, longer runs do not
    auto engine = host.engine(smollm2_path(), "cpu", {"greedy"}, config, {}, {},
                              draft_model ? smollm2_path() : std::filesystem::path());
    ASSERT_NE(engine, nullptr);
    run_window(*engine, "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,");
    lpx_engine_stats s{};
    s.struct_size = sizeof(s);
    engine->stats(s);
    EXPECT_GT(s.spec_accepted_tokens, 0u) << "the window decoded with drafts";
  }
}

TEST(NoAllocation, TheScalarBackendDoesNotAllocateEither) {
  if (!std::filesystem::exists(shared_dir() / "models")) GTEST_SKIP() << "no ../shared/models";
  TestHost host;
  core::EngineConfig config;
  config.context_size = 128;
  auto engine = host.engine(tiny_llama_path(), "cpu-scalar", {"greedy"}, config);
  ASSERT_NE(engine, nullptr);
  run_window(*engine, "Once upon a time");
}

}  // namespace
}  // namespace lpx::test
