/* Built for a future ABI major: must be refused, naming both versions. */
#include "raw_descriptor.h"

LPX_PLUGIN_EXPORT const lpx_plugin_descriptor* lpx_plugin_entry(void) {
  static lpx_plugin_descriptor d = RAW_DESCRIPTOR("abi-major-newer");
  d.abi_major = LPX_ABI_MAJOR + 1;
  return &d;
}
