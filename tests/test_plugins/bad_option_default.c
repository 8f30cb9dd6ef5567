/* Declares an integer option whose default is a string: a plugin bug, refused at load. */
#include "raw_descriptor.h"

static const lpx_option_spec options[] = {
    {"top_k", LPX_OPTION_INT, 0, "\"forty\"", "broken default", 0, 0, NULL}};

LPX_PLUGIN_EXPORT const lpx_plugin_descriptor* lpx_plugin_entry(void) {
  static lpx_plugin_descriptor d = RAW_DESCRIPTOR("bad-option-default");
  d.options = options;
  d.option_count = 1;
  return &d;
}
