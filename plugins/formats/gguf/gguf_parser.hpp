// Parses GGUF v2/v3 from untrusted bytes.
//
// Every count, length, dimension and offset is checked against the bytes actually present, with
// overflow-safe arithmetic, before anything is allocated for it. All checks run in release builds.
// Errors name the field and the values involved, e.g.
//   "tensor 'blk.3.attn_q.weight': data [912, 1936) runs past the end of the file (1024 bytes)".
#pragma once

#include <cstdint>
#include <string>

#include "gguf_file.hpp"
#include "gguf_limits.hpp"
#include "gguf_expected.hpp"

namespace lpx::gguf {

// Parses `size` bytes at `data`. The result borrows from `data`.
Expected<GgufFile> parse_gguf(const std::uint8_t* data, std::uint64_t size,
                                    const Limits& limits = {});

}  // namespace lpx::gguf
