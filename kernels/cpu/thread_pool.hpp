// A small fork-join pool for the CPU kernels: persistent workers plus the calling thread run the
// tasks 0..n-1 of one job, each exactly once, claiming them in order from a shared counter.
// A job is a function pointer and a context (no allocation, no std::function per call). Between
// jobs the workers spin briefly, so back-to-back kernels of one decode step start at once, then
// sleep on a futex (std::atomic wait) so an idle engine burns no CPU. The caller waits for the
// job's tasks, not for the workers: a worker the OS has not scheduled yet simply finds no task
// left, so a busy machine slows a job down to single-threaded speed at worst.
//
// Thread-safety: one thread drives the pool (calls run / parallel_for) at a time; the task
// function runs concurrently on up to size() threads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace lpx::kernels::cpu {

class ThreadPool {
 public:
  // task: 0..n_tasks-1; thread: 0 (the caller) .. size()-1, for per-thread scratch.
  using TaskFn = void (*)(void* context, std::size_t task, std::size_t thread) noexcept;

  // `threads` threads in all, the caller included (threads - 1 workers are started); 0 means
  // physical_core_count().
  explicit ThreadPool(std::size_t threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  std::size_t size() const noexcept { return workers_.size() + 1; }

  // Runs fn(context, t, thread) for every t < n_tasks and returns when all have finished.
  void run(std::size_t n_tasks, TaskFn fn, void* context) noexcept;

  // run() with a callable f(task, thread), which must not throw.
  template <class F>
  void parallel_for(std::size_t n_tasks, F& f) noexcept {
    run(n_tasks, &call<F>, &f);
  }

 private:
  template <class F>
  static void call(void* context, std::size_t task, std::size_t thread) noexcept {
    (*static_cast<F*>(context))(task, thread);
  }

  void worker_main(std::size_t thread) noexcept;
  void work(std::size_t thread) noexcept;

  std::vector<std::thread> workers_;
  // The current job, written by the driving thread before it publishes the job. fn_ and context_
  // are read only by a thread holding a claimed task, during which the job cannot end.
  TaskFn fn_ = nullptr;
  void* context_ = nullptr;
  std::atomic<std::uint32_t> n_tasks_{0};
  std::atomic<bool> stop_{false};
  // Job number (high 32 bits) and next unclaimed task (low 32 bits), claimed by compare-exchange
  // so that a thread holding a stale view of an earlier job can never claim a task of this one.
  alignas(64) std::atomic<std::uint64_t> next_task_{0};
  alignas(64) std::atomic<std::uint32_t> generation_{0};  // bumped once per job: wakes workers
  alignas(64) std::atomic<std::uint32_t> done_{0};        // tasks of this job finished
};

// Boundary i (0..parts) of `n` items split into `parts` contiguous ranges as equal as possible,
// each boundary rounded down to a multiple of `align` (the last one is always n).
constexpr std::size_t split_point(std::size_t n, std::size_t parts, std::size_t i,
                                  std::size_t align = 1) noexcept {
  if (i >= parts) return n;
  const std::size_t point = n / parts * i + n % parts * i / parts;
  return point / align * align;
}

}  // namespace lpx::kernels::cpu
