#include "console.hpp"

#include <cstdio>

namespace lpx::stdio {
namespace {

bool write_flushed(std::FILE* stream, std::string_view text) noexcept {
  if (!text.empty() && std::fwrite(text.data(), 1, text.size(), stream) != text.size()) {
    return false;
  }
  return std::fflush(stream) == 0;
}

}  // namespace

bool write_out(std::string_view text) noexcept { return write_flushed(stdout, text); }

void write_err(std::string_view text) noexcept { (void)write_flushed(stderr, text); }

}  // namespace lpx::stdio
