/* A sampler whose function table says it ends before the last entry its ABI minor defines: must be
 * refused, naming the table and both sizes. */
#include "raw_descriptor.h"

static const lpx_sampler_api short_api = {offsetof(lpx_sampler_api, draw_uniform), NULL, NULL,
                                          raw_apply, NULL, NULL, NULL, NULL, NULL};

LPX_PLUGIN_EXPORT const lpx_plugin_descriptor* lpx_plugin_entry(void) {
  static lpx_plugin_descriptor d = RAW_DESCRIPTOR("short-kind-table");
  d.kind_api = &short_api;
  return &d;
}
