/* A plugin from ABI 1.0, before validate_options existed. Its descriptor is 1.0-sized, and the
 * memory right after it holds a pointer to a function that aborts: a host that reads past the
 * plugin's minor (or its struct_size) would call it. The host must accept this plugin and never
 * call the newer entry. */
#include <stdlib.h>

#include "raw_descriptor.h"

static lpx_status* must_never_be_called(lpx_plugin_state* state, const lpx_options* options) {
  (void)state;
  (void)options;
  abort();
}

LPX_PLUGIN_EXPORT const lpx_plugin_descriptor* lpx_plugin_entry(void) {
  static lpx_plugin_descriptor d = RAW_DESCRIPTOR("abi-minor-older");
  d.abi_minor = 0;
  d.struct_size = offsetof(lpx_plugin_descriptor, validate_options);
  d.validate_options = must_never_be_called;
  return &d;
}
