# Run at build time (cmake -P) so the commit is current without re-configuring.
# Inputs: SOURCE_DIR, OUTPUT, TEMPLATE and the LPX_* values used by the template.
execute_process(COMMAND git -C ${SOURCE_DIR} rev-parse --short=12 HEAD
                OUTPUT_VARIABLE LPX_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE git_failed ERROR_QUIET)
if(git_failed OR LPX_GIT_COMMIT STREQUAL "")
  # No repository (a container build copies the sources without .git): the commit the builder
  # passes in LPX_GIT_COMMIT, else "unknown".
  if(DEFINED ENV{LPX_GIT_COMMIT} AND NOT "$ENV{LPX_GIT_COMMIT}" STREQUAL "")
    set(LPX_GIT_COMMIT "$ENV{LPX_GIT_COMMIT}")
  else()
    set(LPX_GIT_COMMIT "unknown")
  endif()
else()
  execute_process(COMMAND git -C ${SOURCE_DIR} status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE git_changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT git_changes STREQUAL "")
    string(APPEND LPX_GIT_COMMIT "+dirty")
  endif()
endif()
string(STRIP "${LPX_BACKENDS}" LPX_BACKENDS)
if(LPX_BACKENDS STREQUAL "")
  set(LPX_BACKENDS "none built yet")
endif()
configure_file(${TEMPLATE} ${OUTPUT} @ONLY)  # rewrites only when the text changes
