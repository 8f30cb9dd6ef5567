// The progress bar of `quantize` and `convert` on stderr: one line redrawn in place on a
// terminal; elsewhere (a log, CI) a line per tenth of the way.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <string>

#include "lpx/cpp/tensor_types.hpp"
#include "quantize/quantize_model.hpp"

namespace lpx::cli {

class ProgressBar {
 public:
  void show(const core::QuantizeProgress& p) {
    const double share = p.bytes_total ? static_cast<double>(p.bytes_done) / static_cast<double>(p.bytes_total) : 1.0;
    if (!terminal_) {
      const int tenth = static_cast<int>(share * 10);
      if (tenth <= last_tenth_) return;
      last_tenth_ = tenth;
    }
    const int filled = static_cast<int>(share * 30);
    std::fprintf(stderr, "%s[%-30s] %3d%%  %zu/%zu  %-32s %s -> %s%s", terminal_ ? "\r" : "",
                 std::string(static_cast<std::size_t>(filled), '#').c_str(), static_cast<int>(share * 100),
                 p.tensor, p.tensors, p.name->c_str(), tensor_type_traits(p.from)->name,
                 tensor_type_traits(p.to)->name, terminal_ ? "\033[K" : "\n");
    std::fflush(stderr);
  }
  void done() const {
    if (terminal_) std::fputc('\n', stderr);
  }

 private:
  bool terminal_ = isatty(STDERR_FILENO) != 0;
  int last_tenth_ = -1;
};

}  // namespace lpx::cli
