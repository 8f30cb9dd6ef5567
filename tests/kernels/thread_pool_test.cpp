// The CPU backends' thread pool: every task runs exactly once on a valid thread index, for any
// pool size and task count, across many jobs and after the workers went to sleep; and matmul
// results split over the pool do not depend on the thread count.
#include "cpu/thread_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "cpu/cpu_features.hpp"
#include "matmul_test_support.hpp"
#include "reference/matmul.hpp"
#include "reference/quantize_activations.hpp"
#include "reference/tensor_types.hpp"

namespace lpx::kernels::cpu {
namespace {

TEST(ThreadPool, RunsEveryTaskExactlyOnce) {
  for (std::size_t threads = 1; threads <= 4; ++threads) {
    ThreadPool pool(threads);
    ASSERT_EQ(pool.size(), threads);
    for (std::size_t n_tasks : {0u, 1u, 2u, 3u, 7u, 64u, 1000u}) {
      for (int job = 0; job < 20; ++job) {
        std::vector<std::atomic<int>> visits(n_tasks);
        std::atomic<bool> bad_thread{false};
        auto task = [&](std::size_t t, std::size_t thread) noexcept {
          visits[t].fetch_add(1, std::memory_order_relaxed);
          if (thread >= threads) bad_thread = true;
        };
        pool.parallel_for(n_tasks, task);
        for (std::size_t t = 0; t < n_tasks; ++t) {
          ASSERT_EQ(visits[t].load(), 1) << "threads " << threads << " tasks " << n_tasks;
        }
        EXPECT_FALSE(bad_thread);
      }
    }
  }
}

TEST(ThreadPool, UsesItsWorkersAndWakesThemAfterTheySlept) {
  ThreadPool pool(3);
  for (int round = 0; round < 3; ++round) {
    std::vector<std::atomic<int>> by_thread(pool.size());
    // Tasks that last long enough for every worker to take some.
    auto task = [&](std::size_t, std::size_t thread) noexcept {
      by_thread[thread].fetch_add(1);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    };
    pool.parallel_for(60, task);
    int total = 0, busy_threads = 0;
    for (auto& n : by_thread) {
      total += n.load();
      busy_threads += n.load() > 0;
    }
    EXPECT_EQ(total, 60);
    EXPECT_GE(busy_threads, 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past the spin: workers sleep
  }
}

TEST(ThreadPool, DefaultSizeIsThePhysicalCoreCount) {
  EXPECT_GE(physical_core_count(), 1u);
  ThreadPool pool;
  EXPECT_EQ(pool.size(), physical_core_count());
}

TEST(ThreadPool, DestroysCleanlyWhetherWorkersSpinOrSleep) {
  for (int sleep_ms : {0, 5}) {
    auto pool = std::make_unique<ThreadPool>(4);
    std::atomic<int> count{0};
    auto task = [&](std::size_t, std::size_t) noexcept { count.fetch_add(1); };
    pool->parallel_for(16, task);
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    pool.reset();
    EXPECT_EQ(count.load(), 16);
  }
}

TEST(SplitPoint, CoversTheRangeInOrderedAlignedPieces) {
  for (std::size_t n : {0u, 1u, 5u, 36u, 37u, 1000u}) {
    for (std::size_t parts : {1u, 2u, 3u, 8u}) {
      for (std::size_t align : {1u, 4u}) {
        EXPECT_EQ(split_point(n, parts, 0, align), 0u);
        EXPECT_EQ(split_point(n, parts, parts, align), n);
        for (std::size_t i = 0; i < parts; ++i) {
          const std::size_t point = split_point(n, parts, i, align);
          EXPECT_LE(point, split_point(n, parts, i + 1, align));
          EXPECT_EQ(point % align, 0u);
        }
      }
    }
  }
}

// The plugins split a matmul's rows across the pool; each output's sum is one thread's, so the
// thread count cannot change a bit.
TEST(ThreadPool, MatmulResultsDoNotDependOnTheThreadCount) {
  namespace reference = lpx::kernels::reference;
  const std::size_t rows = 101, columns = 96, batch = 3;
  matmul_test::Random random(5);
  for (std::int32_t type : {LPX_TENSOR_Q4_1, LPX_TENSOR_F16}) {
    const auto w = random.weights(type, rows, columns);
    const auto x = random.activations(batch, columns);
    std::vector<std::uint8_t> activations(reference::activation_row_bytes(type, columns) * batch);
    reference::quantize_activations(type, x.data(), columns, batch, activations.data());
    std::vector<float> first;
    for (std::size_t threads = 1; threads <= 4; ++threads) {
      ThreadPool pool(threads);
      std::vector<float> y(rows * batch);
      const reference::MatmulArgs args{type,  w.data(), *reference::row_size_bytes(type, columns),
                                       rows,  columns,  activations.data(),
                                       batch, y.data()};
      const std::size_t tasks = threads * 3;
      auto task = [&](std::size_t t, std::size_t) noexcept {
        reference::dot_rows(args, split_point(rows, tasks, t, 4),
                            split_point(rows, tasks, t + 1, 4));
      };
      pool.parallel_for(tasks, task);
      if (threads == 1) first = y;
      EXPECT_TRUE(matmul_test::same_bits(first, y)) << "threads " << threads;
    }
  }
}

}  // namespace
}  // namespace lpx::kernels::cpu
