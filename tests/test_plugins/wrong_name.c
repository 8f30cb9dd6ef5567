/* Lives in lpx-wrong-name.so but calls itself something else: must be refused. */
#include "raw_descriptor.h"

LPX_PLUGIN_EXPORT const lpx_plugin_descriptor* lpx_plugin_entry(void) {
  static lpx_plugin_descriptor d = RAW_DESCRIPTOR("another-name");
  return &d;
}
