// Shared by the tokenizer tests: where the shared test data lives, opening model files the way the
// CLI does, and llama.cpp's vocabulary test files (.inp / .out).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "metrics/metrics_registry.hpp"
#include "model/model_file.hpp"
#include "plugin_host/host_services.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "tokenizer/tokenizer.hpp"

namespace lpx::test {

// ../shared next to the project.
std::filesystem::path shared_dir();
std::filesystem::path vocab_path(const std::string& name);  // shared/vocab/ggml-vocab-NAME.gguf
// The default model (models/SmolLM2-135M-Instruct.Q4_1.gguf in the project).
std::filesystem::path smollm2_path();

// A real vocabulary that tools/setup.sh builds into models/ from a PyPI package
// (models/vocab-NAME.gguf, NAME: qwen2 or llama-bpe).
std::filesystem::path real_vocab_path(const std::string& name);
// Whether this run is CI's (CI=true): there a file that setup.sh installs must be present, and a
// missing one fails the test instead of skipping it.
bool running_in_ci();

// The vocabulary file names in shared/vocab, without "ggml-vocab-" and ".gguf", less those of
// tokenizer models LPX does not have yet (vocabularies_awaiting_support()).
std::vector<std::string> shared_vocab_names();
const std::set<std::string>& vocabularies_awaiting_support();

// A model file opened with the built-in gguf plugin, and its tokenizer.
struct LoadedTokenizer {
  std::unique_ptr<core::ModelFile> file;
  std::unique_ptr<core::Tokenizer> tokenizer;
};

class ModelOpener {
 public:
  ModelOpener();
  // Fails the calling test (via the returned error) when the file cannot be opened or read.
  core::Expected<LoadedTokenizer> load(const std::filesystem::path& path);
  core::Expected<std::unique_ptr<core::ModelFile>> open(const std::filesystem::path& path);

 private:
  core::MetricsRegistry metrics_;
  core::HostServices services_{metrics_};
  core::PluginRegistry registry_;
};

// The strings of a llama.cpp .inp file: each test string is followed by "\n__ggml_vocab_test__\n".
std::vector<std::string> read_vocab_inputs(const std::filesystem::path& path);
// The ids of a .out file: one line per string, ids separated by spaces.
std::vector<std::vector<std::int32_t>> read_vocab_outputs(const std::filesystem::path& path);

// More strings than llama.cpp's (golden/extra.inp): other scripts, odd whitespace, code,
// special-token look-alikes.
const std::vector<std::string>& extra_strings();

// What decode(encode(text)) must give: the text itself, except that SentencePiece vocabularies
// read a literal U+2581 in the input as their space mark and give back a space.
std::string expected_round_trip(const core::Tokenizer& tokenizer, const std::string& text);

// Printable form of bytes for failure messages.
std::string printable(const std::string& text);

// A fresh folder under the system temp dir, removed with everything in it on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace lpx::test
