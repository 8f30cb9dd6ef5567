# lpx_add_plugin(<target> NAME <plugin-name> SOURCES <files>...)
#
# Builds an LPX plugin: a shared module named lpx-<plugin-name>.so that exports only
# lpx_plugin_entry (hidden visibility plus a linker version script) and has no undefined symbols.
# Put the folder it lands in on LPX_PLUGIN_PATH, or install it into <prefix>/lib/lpx/plugins.
# The version script sits beside this file, in the source tree and when installed alike.
set(LPX_PLUGIN_VERSION_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/lpx_plugin.map" CACHE INTERNAL
    "Linker version script exporting only lpx_plugin_entry")

function(lpx_add_plugin target)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES" ${ARGN})
  if(NOT ARG_NAME MATCHES "^[a-z0-9][a-z0-9_-]*$")
    message(FATAL_ERROR "lpx_add_plugin: NAME '${ARG_NAME}' must match [a-z0-9][a-z0-9_-]*")
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE LPX::sdk)
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME "lpx-${ARG_NAME}"
    SUFFIX ".so"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_options(${target} PRIVATE
    "LINKER:--version-script=${LPX_PLUGIN_VERSION_SCRIPT}"
    "LINKER:--no-undefined")
endfunction()
