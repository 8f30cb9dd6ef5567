#include "cpu/thread_pool.hpp"

#include <chrono>

#include "cpu/cpu_features.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace lpx::kernels::cpu {
namespace {

// How long a waiting thread polls before it sleeps: long enough to span the gaps between the
// kernels of one decode step, short enough not to matter when the engine goes idle.
constexpr auto kSpin = std::chrono::microseconds(100);

// A task index no job reaches: the counter's value while a job is being set up.
constexpr std::uint64_t kClosed = 0xFFFFFFFFu;

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Waits until `value` differs from `old`: polls for kSpin, then blocks.
std::uint32_t wait_for_change(const std::atomic<std::uint32_t>& value, std::uint32_t old) noexcept {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (unsigned i = 1;; ++i) {
    const std::uint32_t now = value.load(std::memory_order_acquire);
    if (now != old) return now;
    cpu_relax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() > deadline) break;
  }
  for (;;) {
    value.wait(old, std::memory_order_acquire);
    const std::uint32_t now = value.load(std::memory_order_acquire);
    if (now != old) return now;
  }
}

}  // namespace

ThreadPool::ThreadPool(std::size_t threads) {
  if (threads == 0) threads = physical_core_count();
  workers_.reserve(threads - 1);
  for (std::size_t t = 1; t < threads; ++t) {
    workers_.emplace_back([this, t] { worker_main(t); });
  }
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::run(std::size_t n_tasks, TaskFn fn, void* context) noexcept {
  if (n_tasks == 0) return;
  if (workers_.empty() || n_tasks == 1 || n_tasks >= kClosed) {
    for (std::size_t t = 0; t < n_tasks; ++t) fn(context, t, 0);
    return;
  }
  const auto n = static_cast<std::uint32_t>(n_tasks);
  // First close the counter under the new job number: a worker still holding a view of the
  // last job can then neither pass the task check nor win its compare-exchange while the
  // fields below change.
  const std::uint64_t job = ((next_task_.load(std::memory_order_relaxed) >> 32) + 1) << 32;
  next_task_.store(job | kClosed, std::memory_order_relaxed);
  fn_ = fn;
  context_ = context;
  done_.store(0, std::memory_order_relaxed);
  n_tasks_.store(n, std::memory_order_release);      // whoever sees it also sees the closed counter
  next_task_.store(job, std::memory_order_release);  // publishes the job to claimers
  generation_.fetch_add(1, std::memory_order_release);  // and wakes the workers
  generation_.notify_all();
  work(0);
  for (std::uint32_t done = done_.load(std::memory_order_acquire); done != n;) {
    done = wait_for_change(done_, done);
  }
}

void ThreadPool::work(std::size_t thread) noexcept {
  std::uint64_t claim = next_task_.load(std::memory_order_acquire);
  for (;;) {
    const auto task = static_cast<std::uint32_t>(claim);
    if (task >= n_tasks_.load(std::memory_order_acquire)) return;
    if (!next_task_.compare_exchange_weak(claim, claim + 1, std::memory_order_acq_rel,
                                          std::memory_order_acquire)) {
      continue;  // `claim` now holds the current value
    }
    fn_(context_, task, thread);
    const std::uint32_t n = n_tasks_.load(std::memory_order_relaxed);
    if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == n) done_.notify_one();
    claim = next_task_.load(std::memory_order_acquire);
  }
}

void ThreadPool::worker_main(std::size_t thread) noexcept {
  std::uint32_t seen = 0;
  for (;;) {
    seen = wait_for_change(generation_, seen);
    if (stop_.load(std::memory_order_relaxed)) return;
    work(thread);
  }
}

}  // namespace lpx::kernels::cpu
