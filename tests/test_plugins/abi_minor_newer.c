/* Built for a newer minor than the host has: must be refused, naming both versions. */
#include "raw_descriptor.h"

LPX_PLUGIN_EXPORT const lpx_plugin_descriptor* lpx_plugin_entry(void) {
  static lpx_plugin_descriptor d = RAW_DESCRIPTOR("abi-minor-newer");
  d.abi_minor = LPX_ABI_MINOR + 1;
  return &d;
}
