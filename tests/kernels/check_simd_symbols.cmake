# Fails when a SIMD kernel library (avx2, avx512) defines a weak function symbol (an out-of-line copy of an
# inline function or template). Run by CTest: cmake -DNM=<nm> -DLIBRARY=<archive> -P this-file.
execute_process(COMMAND ${NM} -C --defined-only ${LIBRARY}
                OUTPUT_VARIABLE symbols RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${NM} failed on ${LIBRARY}")
endif()
string(REGEX MATCHALL "[0-9a-f]+ W [^\n]*" weak "${symbols}")
if(weak)
  string(REPLACE ";" "\n  " listed "${weak}")
  message(FATAL_ERROR "${LIBRARY} defines shared (weak) functions; make them static, "
                      "internal or force-inline:\n  ${listed}")
endif()
message(STATUS "no weak function symbols in ${LIBRARY}")
