# lpx_add_builtin_plugin(<target> NAME <name> SOURCES <files>...): a plugin shipped with LPX, built
# with the public SDK like any third-party plugin, placed where lpx-pipeline looks for plugins
# (lib/lpx/plugins in the build tree and when installed).
function(lpx_add_builtin_plugin target)
  lpx_add_plugin(${target} ${ARGN})
  lpx_project_warnings(${target})
  set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${LPX_PLUGIN_OUTPUT_DIR})
  install(TARGETS ${target} LIBRARY DESTINATION ${LPX_PLUGIN_INSTALL_DIR} COMPONENT runtime)
  set_property(GLOBAL APPEND PROPERTY LPX_BUILTIN_PLUGIN_TARGETS ${target})
endfunction()
