/* The entry point returns NULL. */
#include <stddef.h>

#include <lpx/plugin.h>

LPX_PLUGIN_EXPORT const lpx_plugin_descriptor* lpx_plugin_entry(void) { return NULL; }
