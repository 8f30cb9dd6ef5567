/* Claims the host's minor but a descriptor too small for it: must be refused. */
#include "raw_descriptor.h"

LPX_PLUGIN_EXPORT const lpx_plugin_descriptor* lpx_plugin_entry(void) {
  static lpx_plugin_descriptor d = RAW_DESCRIPTOR("short-descriptor");
  d.struct_size = offsetof(lpx_plugin_descriptor, kind);
  return &d;
}
