#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

#include <lpx/cpp/host.hpp>

namespace lpx::batch {
namespace {

std::string duration_text(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  char text[32];
  if (s >= 3600) {
    std::snprintf(text, sizeof text, "%lldh%02lldm", s / 3600, s % 3600 / 60);
  } else if (s >= 60) {
    std::snprintf(text, sizeof text, "%lldm%02llds", s / 60, s % 60);
  } else {
    std::snprintf(text, sizeof text, "%llds", s);
  }
  return text;
}

}  // namespace

std::string progress_text(const ProgressCounts& c, bool with_bar) {
  const std::uint64_t done = c.done_before + c.ok + c.failed;
  std::string out;
  if (with_bar) {
    constexpr int kWidth = 24;
    const int filled = c.total ? static_cast<int>(kWidth * done / c.total) : kWidth;
    out += '[';
    out.append(static_cast<std::size_t>(filled), '#');
    out.append(static_cast<std::size_t>(kWidth - filled), '.');
    out += "] ";
  }
  char text[160];
  const double rate = c.elapsed_s > 0 ? static_cast<double>(c.tokens) / c.elapsed_s : 0;
  const double items_per_s = c.elapsed_s > 0 ? static_cast<double>(c.ok + c.failed) / c.elapsed_s : 0;
  const std::uint64_t remaining = c.total > done ? c.total - done : 0;
  std::snprintf(text, sizeof text, "%llu/%llu  ok %llu  failed %llu  %.0f tok/s",
                static_cast<unsigned long long>(done), static_cast<unsigned long long>(c.total),
                static_cast<unsigned long long>(c.done_before - c.failed_before + c.ok),
                static_cast<unsigned long long>(c.failed_before + c.failed), rate);
  out += text;
  if (remaining > 0) {
    out += "  ETA " + (items_per_s > 0 ? duration_text(static_cast<double>(remaining) / items_per_s) : std::string("?"));
  }
  return out;
}

Progress::Progress(ProgressMode mode, std::chrono::seconds log_interval) {
  const bool terminal = isatty(STDERR_FILENO) == 1;
  bar_ = mode == ProgressMode::kBar || (mode == ProgressMode::kAuto && terminal);
  log_ = mode == ProgressMode::kLog || (mode == ProgressMode::kAuto && !terminal);
  interval_ = bar_ ? std::chrono::steady_clock::duration(std::chrono::milliseconds(200))
                   : std::chrono::steady_clock::duration(log_interval);
}

void Progress::update(const ProgressCounts& counts) {
  if (!bar_ && !log_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < interval_) return;
  last_ = now;
  if (bar_) {
    std::fprintf(stderr, "\r\033[K%s", progress_text(counts, true).c_str());
    std::fflush(stderr);
  } else {
    log_info("progress " + progress_text(counts, false));
  }
}

void Progress::finish(const ProgressCounts& counts) {
  if (bar_) {
    std::fprintf(stderr, "\r\033[K%s\n", progress_text(counts, true).c_str());
    std::fflush(stderr);
  } else if (log_) {
    log_info("progress " + progress_text(counts, false));
  }
}

}  // namespace lpx::batch
