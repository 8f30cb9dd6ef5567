# xgrammar (Apache-2.0, https://github.com/mlc-ai/xgrammar): the grammar engine of the `grammar`
# sampler (GBNF/EBNF grammars, JSON Schema, token masks from an Earley parser with an adaptive
# token-mask cache). Its C++ core is built here from the source distribution on PyPI, pinned and
# hash-checked; only the core (cpp/*.cc), not its Python or TVM bindings. Offline builds can
# point FETCHCONTENT_SOURCE_DIR_XGRAMMAR at an unpacked copy of the same release.
include(FetchContent)

set(LPX_XGRAMMAR_VERSION 0.2.9)
FetchContent_Declare(xgrammar
  URL https://files.pythonhosted.org/packages/3a/2f/5bf8e8fa6619cff534932f79b0abc81a417d354bc5093252c1a6081d0a93/xgrammar-0.2.9.tar.gz
  URL_HASH SHA256=87b466bca2475e29bb0323abc62c6c33cbcbcff47e5fb800a3e2099ac9620b90
  DOWNLOAD_EXTRACT_TIMESTAMP ON)
# Populated, not added: its own CMakeLists sets project-wide flags (-Werror, -flto) and builds
# Python bindings by default.
FetchContent_GetProperties(xgrammar)
if(NOT xgrammar_POPULATED)
  FetchContent_Populate(xgrammar)
endif()

file(GLOB_RECURSE LPX_XGRAMMAR_SOURCES CONFIGURE_DEPENDS "${xgrammar_SOURCE_DIR}/cpp/*.cc")
list(FILTER LPX_XGRAMMAR_SOURCES EXCLUDE REGEX "/cpp/(tvm_ffi|nanobind)/")
add_library(lpx_xgrammar STATIC ${LPX_XGRAMMAR_SOURCES})
set_target_properties(lpx_xgrammar PROPERTIES CXX_STANDARD 17 POSITION_INDEPENDENT_CODE ON)
target_include_directories(lpx_xgrammar SYSTEM PUBLIC
  ${xgrammar_SOURCE_DIR}/include
  ${xgrammar_SOURCE_DIR}/3rdparty/picojson
  ${xgrammar_SOURCE_DIR}/3rdparty/dlpack/include)
target_compile_definitions(lpx_xgrammar PUBLIC XGRAMMAR_ENABLE_CPPTRACE=0)
# Third-party code: built as its authors build it (-O3), without LPX's warning set.
target_compile_options(lpx_xgrammar PRIVATE -O3 -w)
