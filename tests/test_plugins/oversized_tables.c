/* A plugin whose descriptor and sampler table claim more bytes than ABI 2.0 defines (as if
 * built against a later SDK that appended entries without raising the minor it reports). The
 * memory right after each struct holds a pointer to a function that aborts: a host that read
 * past what the plugin's minor defines would copy and call it. The host must load this plugin,
 * run it, and never touch those bytes. */
#include <stdlib.h>

#include "raw_descriptor.h"

static lpx_status* must_never_be_called(lpx_plugin_state* state, const lpx_options* options) {
  (void)state;
  (void)options;
  abort();
}

struct padded_descriptor {
  lpx_plugin_descriptor descriptor;
  lpx_status* (*later_entry)(lpx_plugin_state*, const lpx_options*);
};

struct padded_sampler_api {
  lpx_sampler_api api;
  lpx_status* (*later_entry)(lpx_plugin_state*, const lpx_options*);
};

static const struct padded_sampler_api sampler = {
    {sizeof(struct padded_sampler_api), NULL, NULL, raw_apply, NULL, NULL, NULL, NULL, NULL},
    must_never_be_called};

LPX_PLUGIN_EXPORT const lpx_plugin_descriptor* lpx_plugin_entry(void) {
  static struct padded_descriptor d = {RAW_DESCRIPTOR("oversized-tables"), must_never_be_called};
  d.descriptor.struct_size = sizeof(struct padded_descriptor);
  d.descriptor.kind_api = &sampler;
  return &d.descriptor;
}
