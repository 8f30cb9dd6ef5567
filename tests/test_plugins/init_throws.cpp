// A careless C++ plugin whose init lets an exception escape across the C ABI (no SDK wrapper).
// The host must refuse it with a clear message and keep running.
#include <stdexcept>

extern "C" {
#include "raw_descriptor.h"
}

namespace {
lpx_status* throwing_init(const lpx_host_api*, lpx_plugin_state**) {
  throw std::runtime_error("cannot open /dev/nonexistent");
}
}  // namespace

extern "C" LPX_PLUGIN_EXPORT const lpx_plugin_descriptor* lpx_plugin_entry(void) {
  static lpx_plugin_descriptor d = RAW_DESCRIPTOR("init-throws");
  d.init = throwing_init;
  return &d;
}
