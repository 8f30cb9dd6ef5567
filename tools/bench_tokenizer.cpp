// lpx-bench-tokenizer: encode (and decode) throughput of each tokenizer on ~1 MB of English text
// made from the repository's own README.md and docs/*.md, repeated.
//
//   lpx-bench-tokenizer [--runs N] [--bytes N] [MODEL.gguf...]
//
// Without model paths it measures every vocabulary in ../shared/vocab and the default model in
// models/. Prints one line per vocabulary: tokens, encode MB/s by the thread's CPU time and by the
// wall clock, decode MB/s by CPU time (best of N runs each, one thread). CPU time is the steadier
// figure on a shared machine: the wall clock also counts time the thread waited for a core.
// Results are recorded in docs/perf/tokenizer.md.
#include <algorithm>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "metrics/metrics_registry.hpp"
#include "model/model_file.hpp"
#include "plugin_host/host_services.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "tokenizer/tokenizer.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// README.md and docs/**/*.md, sorted, concatenated and repeated up to `bytes`.
std::string corpus(const fs::path& root, std::size_t bytes) {
  std::vector<fs::path> files = {root / "README.md"};
  std::error_code error;
  for (const auto& entry : fs::recursive_directory_iterator(root / "docs", error)) {
    if (entry.is_regular_file() && entry.path().extension() == ".md") files.push_back(entry.path());
  }
  std::sort(files.begin() + 1, files.end());
  std::string once;
  for (const fs::path& file : files) once += read_file(file) + "\n";
  if (once.empty()) return {};
  std::string text;
  text.reserve(bytes + once.size());
  while (text.size() < bytes) text += once;
  text.resize(bytes);
  // Do not end inside a UTF-8 character.
  while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80) text.pop_back();
  if (!text.empty() && static_cast<unsigned char>(text.back()) >= 0xC0) text.pop_back();
  return text;
}

// What decode(encode(text)) gives back: SentencePiece vocabularies read a literal U+2581 as their
// space mark and return a space.
std::string round_trip_text(const std::string& text, bool spm) {
  if (!spm) return text;
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

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  std::size_t bytes = 1 << 20;
  std::vector<fs::path> models;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--bytes" && i + 1 < argc) {
      bytes = static_cast<std::size_t>(std::max(1L, std::atol(argv[++i])));
    } else if (arg == "--help" || arg == "-h") {
      std::printf("usage: lpx-bench-tokenizer [--runs N] [--bytes N] [MODEL.gguf...]\n");
      return 0;
    } else {
      models.emplace_back(arg);
    }
  }
  const fs::path root = LPX_SOURCE_DIR;
  if (models.empty()) {
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(root / ".." / "shared" / "vocab", error)) {
      if (entry.path().extension() == ".gguf") models.push_back(entry.path());
    }
    std::sort(models.begin(), models.end());
    const fs::path smollm2 = root / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf";
    if (fs::exists(smollm2)) models.push_back(smollm2);
  }
  const std::string text = corpus(root, bytes);
  if (text.empty()) {
    std::fprintf(stderr, "no text found under %s (README.md, docs/)\n", root.c_str());
    return 1;
  }
  const double megabytes = static_cast<double>(text.size()) / 1e6;
  std::printf("text: %zu bytes (README.md + docs/*.md repeated), best of %d runs, 1 thread\n",
              text.size(), runs);
  std::printf("%-34s %-6s %-15s %8s %12s %13s %12s\n", "vocabulary", "model", "pre", "tokens",
              "encode(cpu)", "encode(wall)", "decode(cpu)");

  lpx::core::MetricsRegistry metrics;
  lpx::core::HostServices services(metrics);
  lpx::core::PluginRegistry registry({LPX_BUILTIN_PLUGIN_DIR}, services);
  int failures = 0;
  for (const fs::path& path : models) {
    auto file = lpx::core::ModelFile::open(path.string(), registry);
    if (!file) {
      std::fprintf(stderr, "%s\n", file.error().message.c_str());
      ++failures;
      continue;
    }
    auto vocabulary = lpx::core::load_vocabulary(**file);
    if (!vocabulary) {
      std::fprintf(stderr, "%s\n", vocabulary.error().message.c_str());
      ++failures;
      continue;
    }
    auto tokenizer = lpx::core::Tokenizer::create(std::move(*vocabulary));
    if (!tokenizer) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), tokenizer.error().message.c_str());
      ++failures;
      continue;
    }
    const lpx::core::Tokenizer& t = **tokenizer;
    const std::string expected = round_trip_text(text, t.vocabulary().model == lpx::core::TokenizerModel::spm);
    double best_encode = 1e30;
    double best_encode_wall = 1e30;
    double best_decode = 1e30;
    std::size_t n_tokens = 0;
    bool round_trip = true;
    for (int run = 0; run < runs; ++run) {
      const auto start = Clock::now();
      const double cpu_start = thread_cpu_seconds();
      auto ids = t.encode(text, {.add_bos = false, .add_eos = false});
      best_encode = std::min(best_encode, thread_cpu_seconds() - cpu_start);
      best_encode_wall = std::min(best_encode_wall, seconds_since(start));
      if (!ids) {
        std::fprintf(stderr, "%s: %s\n", path.c_str(), ids.error().message.c_str());
        ++failures;
        break;
      }
      n_tokens = ids->size();
      const double decode_start = thread_cpu_seconds();
      auto back = t.decode(*ids);
      best_decode = std::min(best_decode, thread_cpu_seconds() - decode_start);
      round_trip = round_trip && back && *back == expected;
    }
    std::string name = path.filename().string();
    if (name.size() > 34) name = name.substr(0, 31) + "...";
    std::printf("%-34s %-6s %-15s %8zu %7.1f MB/s %8.1f MB/s %7.1f MB/s%s\n", name.c_str(),
                lpx::core::tokenizer_model_name(t.vocabulary().model),
                t.vocabulary().model == lpx::core::TokenizerModel::bpe ? t.vocabulary().pre.c_str() : "-",
                n_tokens, megabytes / best_encode, megabytes / best_encode_wall,
                megabytes / best_decode,
                round_trip ? "" : "  (decode differs from the text)");
  }
  return failures == 0 ? 0 : 1;
}
