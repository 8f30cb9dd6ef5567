#include "bench/memory_bandwidth.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

namespace lpx::core::bench {
namespace {

// Seconds for `work(t)` on `threads` threads, best of 3.
double best_seconds(unsigned threads, const std::function<void(unsigned)>& work) {
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work, t);
    for (std::thread& t : pool) t.join();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace

double read_bandwidth_gbs(unsigned threads) {
  threads = std::max(1u, threads);
  const std::size_t bytes = std::size_t{1} << 30;
  std::vector<std::uint64_t> buffer(bytes / 8);
  for (std::size_t i = 0; i < buffer.size(); i += 512) buffer[i] = i;  // touch every page
  std::atomic<std::uint64_t> sink{0};
  const double s = best_seconds(threads, [&](unsigned t) {
    const std::size_t n = buffer.size() / threads;
    const std::uint64_t* p = buffer.data() + t * n;
    std::uint64_t a = 0, b = 0, c = 0, d = 0;
    for (std::size_t i = 0; i + 4 <= n; i += 4) {
      a += p[i];
      b += p[i + 1];
      c += p[i + 2];
      d += p[i + 3];
    }
    sink += a + b + c + d;  // keeps the loop
  });
  return static_cast<double>(bytes) / s / 1e9;
}

double copy_bandwidth_gbs(unsigned threads) {
  threads = std::max(1u, threads);
  const std::size_t bytes = std::size_t{1} << 29;
  std::vector<std::uint8_t> from(bytes, 1), to(bytes, 0);
  const double s = best_seconds(threads, [&](unsigned t) {
    const std::size_t n = bytes / threads;
    std::memcpy(to.data() + t * n, from.data() + t * n, n);
  });
  return 2.0 * static_cast<double>(bytes) / s / 1e9;
}

}  // namespace lpx::core::bench
