/* init reports a failure through a status made by the host. */
#include "raw_descriptor.h"

static lpx_status* failing_init(const lpx_host_api* host, lpx_plugin_state** out_state) {
  (void)out_state;
  return host->status_create(LPX_ERR_UNSUPPORTED, "no usable device on this machine");
}

LPX_PLUGIN_EXPORT const lpx_plugin_descriptor* lpx_plugin_entry(void) {
  static lpx_plugin_descriptor d = RAW_DESCRIPTOR("init-fails");
  d.init = failing_init;
  return &d;
}
