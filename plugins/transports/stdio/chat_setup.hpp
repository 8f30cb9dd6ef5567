// What both chat modes (interactive and piped) work with during one run of the transport.
#pragma once

#include <lpx/cpp/engine.hpp>

#include "request_canceller.hpp"
#include "stdio_options.hpp"
#include "stop_signal.hpp"

namespace lpx::stdio {

struct ChatSetup {
  const EngineHandle& engine;
  RequestCanceller& canceller;
  const StopSignal& stop;
  const StdioOptions& options;
  bool show_stats;  // the `stats` option or `lpx-pipeline run --stats`
};

// The error run() ends with after request_stop(); the host treats it as a clean exit.
[[noreturn]] inline void throw_stopped() { throw Error(LPX_ERR_CANCELLED, "stopped"); }

}  // namespace lpx::stdio
