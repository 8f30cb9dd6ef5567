// Writes the fuzzer's seed corpus: small valid GGUF files of several shapes, and every malformed
// case of the parser tests (each sits next to a code path worth mutating).
#include <cstdio>
#include <filesystem>
#include <string>

#include "formats/gguf_builder.hpp"
#include "formats/malformed_gguf_cases.hpp"
#include "formats/tiny_llama.hpp"

int main(int argc, char** argv) {
  using namespace lpx::test;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  auto save = [&](const std::string& name, const GgufBuilder& builder) {
    builder.write((out / (name + ".gguf")).string());
  };
  TinyLlama small;
  small.n_layer = 1;
  small.n_embd = 32;
  small.n_head = 2;
  small.n_head_kv = 1;
  small.n_ff = 32;
  small.n_vocab = 8;
  small.n_rot = 16;
  save("tiny-llama", small.builder());
  small.weight_type = kGgmlQ8_0;
  save("tiny-llama-q8_0", small.builder());
  GgufBuilder nested;
  nested.strings("tokenizer.ggml.merges", {"a b", "ab c"}).i32s("ids", {1, -2, 3});
  nested.u32("general.alignment", 64).layout_alignment(64).tensor("t", kGgmlF16, {64});
  save("arrays-and-alignment", nested);
  save("metadata-only", GgufBuilder().string("general.name", "x").boolean("flag", true));
  for (const MalformedGguf& c : malformed_gguf_cases()) {
    const auto bytes = c.make();
    if (bytes.size() > 64 * 1024) continue;  // keep the corpus small
    std::FILE* f = std::fopen((out / (std::string("malformed-") + c.name)).string().c_str(), "wb");
    if (f == nullptr) return 1;
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  return 0;
}
