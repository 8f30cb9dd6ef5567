# Warnings as errors for the project's own code (third-party headers are included as SYSTEM).
function(lpx_project_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Wpedantic -Werror -Wshadow -Wcast-align -Wunused
      -Wdouble-promotion -Wformat=2>
    $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual>)
endfunction()
