#include "tokenizer_test_support.hpp"

#include <stdlib.h>

#include <algorithm>
#include <set>
#include <cstdlib>
#include <string_view>
#include <stdexcept>
#include <fstream>
#include <sstream>

namespace lpx::test {

std::filesystem::path shared_dir() { return std::filesystem::path(LPX_SOURCE_DIR) / ".." / "shared"; }

std::filesystem::path vocab_path(const std::string& name) {
  return shared_dir() / "vocab" / ("ggml-vocab-" + name + ".gguf");
}

std::filesystem::path smollm2_path() {
  return std::filesystem::path(LPX_SOURCE_DIR) / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf";
}

std::filesystem::path real_vocab_path(const std::string& name) {
  return std::filesystem::path(LPX_SOURCE_DIR) / "models" / ("vocab-" + name + ".gguf");
}

bool running_in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string_view(ci) == "true";
}

const std::set<std::string>& vocabularies_awaiting_support() {
  // WordPiece (BERT): issue 43; Gemma 4's tokenizer model and Qwen3.5's pre-tokenizer: issue 42.
  // vocabulary_errors_test.cpp checks each is refused, saying why.
  static const std::set<std::string> awaiting = {"bert-bge", "gemma-4", "qwen35"};
  return awaiting;
}

std::vector<std::string> shared_vocab_names() {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(shared_dir() / "vocab", error)) {
    const std::string file = entry.path().filename().string();
    const std::string prefix = "ggml-vocab-";
    const std::string suffix = ".gguf";
    if (file.size() > prefix.size() + suffix.size() && file.starts_with(prefix) && file.ends_with(suffix)) {
      const std::string name = file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
      if (!vocabularies_awaiting_support().contains(name)) names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

ModelOpener::ModelOpener() : registry_({LPX_BUILTIN_PLUGIN_DIR}, services_) {}

core::Expected<std::unique_ptr<core::ModelFile>> ModelOpener::open(const std::filesystem::path& path) {
  return core::ModelFile::open(path.string(), registry_);
}

core::Expected<LoadedTokenizer> ModelOpener::load(const std::filesystem::path& path) {
  auto file = open(path);
  if (!file) return core::unexpected(file.error());
  auto vocabulary = core::load_vocabulary(**file);
  if (!vocabulary) return core::unexpected(vocabulary.error());
  auto tokenizer = core::Tokenizer::create(std::move(*vocabulary));
  if (!tokenizer) return core::unexpected(tokenizer.error().with_context(path.string()));
  return LoadedTokenizer{std::move(*file), std::move(*tokenizer)};
}

namespace {
std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}
}  // namespace

std::vector<std::string> read_vocab_inputs(const std::filesystem::path& path) {
  const std::string text = read_all(path);
  const std::string separator = "\n__ggml_vocab_test__\n";
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find(separator, start);
    if (end == std::string::npos) break;  // nothing after the last separator
    out.push_back(text.substr(start, end - start));
    start = end + separator.size();
  }
  return out;
}

std::vector<std::vector<std::int32_t>> read_vocab_outputs(const std::filesystem::path& path) {
  std::istringstream lines(read_all(path));
  std::vector<std::vector<std::int32_t>> out;
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream ids(line);
    std::vector<std::int32_t> row;
    std::int32_t id = 0;
    while (ids >> id) row.push_back(id);
    out.push_back(std::move(row));
  }
  return out;
}

const std::vector<std::string>& extra_strings() {
  static const std::vector<std::string> strings =
      read_vocab_inputs(std::filesystem::path(LPX_TOKENIZER_GOLDEN_DIR) / "extra.inp");
  return strings;
}

std::string expected_round_trip(const core::Tokenizer& tokenizer, const std::string& text) {
  if (tokenizer.vocabulary().model != core::TokenizerModel::spm) return text;
  const std::string_view mark = "\xE2\x96\x81";
  std::string out;
  for (std::size_t at = 0; at < text.size();) {
    if (text.compare(at, mark.size(), mark) == 0) {
      out += ' ';
      at += mark.size();
    } else {
      out += text[at++];
    }
  }
  return out;
}

std::string printable(const std::string& text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7F) {
      out += ch;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

ScratchDir::ScratchDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "lpx-tokenizer-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace lpx::test
