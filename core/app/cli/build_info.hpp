// Facts about this build, generated at build time (see cmake/build_info.cpp.in).
#pragma once

namespace lpx::cli {

struct BuildInfo {
  const char* version;       // LPX release version
  const char* git_commit;    // short hash, "+dirty" when built from a modified tree, or "unknown"
  const char* compiler;      // e.g. "GNU 12.2.0"
  const char* build_type;    // CMAKE_BUILD_TYPE
  const char* sanitizers;    // "address,undefined" or "none"
  const char* backends;      // built-in quant_backend plugins, or "none built yet"
  const char* cuda;          // "toolkit 13.0" or "disabled"
};

const BuildInfo& build_info();

}  // namespace lpx::cli
