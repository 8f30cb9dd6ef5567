/* A shared library that is not a plugin: it exports no lpx_plugin_entry. */
#include <lpx/plugin.h>

LPX_PLUGIN_EXPORT int lpx_plugin_entry_misspelt(void) { return 0; }
