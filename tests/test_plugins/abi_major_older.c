/* A plugin built against SDK 1.5, the last 1.x: must be refused, naming both versions and
 * saying to rebuild it against SDK 2.x. */
#include "raw_descriptor.h"

LPX_PLUGIN_EXPORT const lpx_plugin_descriptor* lpx_plugin_entry(void) {
  static lpx_plugin_descriptor d = RAW_DESCRIPTOR("abi-major-older");
  d.abi_major = 1;
  d.abi_minor = 5;
  return &d;
}
