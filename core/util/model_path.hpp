// A model on disk is one file (GGUF) or a directory of files (a Hugging Face model: config.json,
// safetensors shards, tokenizer files). What the host records about it — size, state for reload,
// SHA-256 — covers every file a directory holds at its top level.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "util/expected.hpp"

namespace lpx::core {

// The file itself, or the regular files directly in the directory, sorted by name.
std::vector<std::filesystem::path> model_files(const std::string& path);
// Their bytes together; 0 when nothing can be read.
std::uint64_t model_bytes(const std::string& path);
// "bytes@newest-mtime": changes when any of the files is replaced.
std::string model_state(const std::string& path);
// A file's SHA-256; a directory's is the SHA-256 of the lines "<sha256>  <name>\n" of its files
// in name order (what `sha256sum * | sha256sum` prints there).
Expected<std::string> model_sha256(const std::string& path);

}  // namespace lpx::core
