// Conformance with the peer (llama.cpp): tests/fixtures/greedy/*.json (real models) and
// tests/fixtures/families/*.json (synthetic models of each family, which the test writes with
// `synth` as the fixture says and checks by sha256) hold, per prompt, the peer's greedy tokens
// and its top-2 logits at each step (see docs/peers.md). Two checks:
//  - teacher-forced: feed the peer's tokens through LPX's forward pass (whole prompt in one batch,
//    then one token per step, as the peer ran) and compare the logits of the peer's top-2 tokens
//    at every step; the largest difference is printed.
//  - free-running: LPX's engine generates greedily; the tokens must equal the peer's up to the
//    first step whose recorded margin is below 1e-3 (where rounding may legitimately flip them).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <ostream>
#include <sstream>

#include <unistd.h>

#include <boost/json.hpp>
#include <openssl/evp.h>

#include "engine_test_support.hpp"
#include "support/test_support.hpp"
#include "synth/model_shapes.hpp"
#include "synth/synthetic_model.hpp"

namespace lpx::test {
namespace {

constexpr double kMarginFloor = 1e-3;

struct FixturePrompt {
  std::string name;
  std::string prompt;
  bool parse_special = false;
  bool add_bos = true;
  std::vector<std::int32_t> prompt_ids;
  std::vector<std::int32_t> generated;
  std::vector<std::int32_t> top1, top2;
  std::vector<float> top1_logit, top2_logit, margin;
};

std::vector<std::int32_t> ints(const boost::json::value& v) {
  std::vector<std::int32_t> out;
  for (const auto& x : v.as_array()) out.push_back(static_cast<std::int32_t>(x.to_number<std::int64_t>()));
  return out;
}
std::vector<float> floats(const boost::json::value& v) {
  std::vector<float> out;
  for (const auto& x : v.as_array()) out.push_back(static_cast<float>(x.to_number<double>()));
  return out;
}

boost::json::value read_fixture(const std::string& file) {
  std::ifstream in(std::string(LPX_SOURCE_DIR) + "/tests/fixtures/" + file);
  std::stringstream text;
  text << in.rdbuf();
  return boost::json::parse(text.str());
}

std::string sha256_of(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  EVP_DigestInit_ex(context, EVP_sha256(), nullptr);
  std::vector<char> chunk(1 << 20);
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
    EVP_DigestUpdate(context, chunk.data(), static_cast<std::size_t>(in.gcount()));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(context, digest, &length);
  EVP_MD_CTX_free(context);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    constexpr char kDigits[] = "0123456789abcdef";
    hex += kDigits[digest[i] >> 4];
    hex += kDigits[digest[i] & 15];
  }
  return hex;
}

// The synthetic model a family fixture was made from, written with synth as the fixture says
// into the build tree and checked byte for byte by its sha256 (a different synth output would
// make the comparison meaningless, so it fails with that reason instead). A verified file is
// kept, with a marker holding its sha256, for the other tests and later runs.
std::filesystem::path synthetic_model(const std::string& fixture) {
  const boost::json::object synth = read_fixture(fixture).at("synth").as_object();
  const std::string like = boost::json::value_to<std::string>(synth.at("like"));
  const std::string expected = boost::json::value_to<std::string>(synth.at("sha256"));
  const std::filesystem::path dir = std::filesystem::path(LPX_BINARY_DIR) / "test-models";
  const std::filesystem::path path = dir / (like + "-" + expected.substr(0, 16) + ".gguf");
  const std::filesystem::path marker = path.string() + ".sha256";
  if (std::filesystem::exists(path) && std::filesystem::exists(marker) &&
      read_file(marker) == expected) {
    return path;
  }
  const core::synth::ModelShape* known = core::synth::find_model_shape(like);
  if (known == nullptr) throw std::runtime_error(fixture + ": unknown synth shape " + like);
  core::synth::ModelShape shape = *known;
  shape.n_layer = static_cast<std::uint32_t>(synth.at("layers").to_number<std::int64_t>());
  const auto type = core::synth::synth_type(boost::json::value_to<std::string>(synth.at("type")));
  std::filesystem::create_directories(dir);
  // Written under a name of this process's, then renamed: tests running in parallel never see
  // a half-written file.
  const std::filesystem::path partial = path.string() + "." + std::to_string(::getpid());
  auto ok = core::synth::write_synthetic_model(
      shape, *type, static_cast<std::uint64_t>(synth.at("seed").to_number<std::int64_t>()),
      partial.string());
  if (!ok) throw std::runtime_error(ok.error().message);
  const std::string actual = sha256_of(partial);
  const auto bytes = static_cast<std::uintmax_t>(synth.at("bytes").to_number<std::int64_t>());
  if (std::filesystem::file_size(partial) != bytes) {
    std::filesystem::remove(partial);
    throw std::runtime_error(fixture + ": synth wrote " + like + " with a size other than the "
                             "fixture's " + std::to_string(bytes) + " bytes; regenerate the fixture");
  }
  if (actual != expected) {
    std::filesystem::remove(partial);
    throw std::runtime_error(fixture + ": synth wrote a different " + like + " file than the one "
                             "the peer ran (sha256 " + actual + ", fixture " + expected +
                             "); regenerate the fixture (tools/make_family_fixtures.py)");
  }
  std::filesystem::rename(partial, path);
  write_file(marker, expected);
  return path;
}

std::vector<FixturePrompt> load_fixture(const std::string& file) {
  const boost::json::value root = read_fixture(file);
  std::vector<FixturePrompt> prompts;
  for (const auto& p : root.at("prompts").as_array()) {
    FixturePrompt f;
    f.name = boost::json::value_to<std::string>(p.at("name"));
    if (const auto* text = p.as_object().if_contains("prompt")) {  // token-id prompts have none
      f.prompt = boost::json::value_to<std::string>(*text);
      f.parse_special = p.at("parse_special").as_bool();
      f.add_bos = p.at("add_bos").as_bool();
    }
    f.prompt_ids = ints(p.at("prompt_ids"));
    f.generated = ints(p.at("generated_ids"));
    f.top1 = ints(p.at("top1_id"));
    f.top2 = ints(p.at("top2_id"));
    f.top1_logit = floats(p.at("top1_logit"));
    f.top2_logit = floats(p.at("top2_logit"));
    f.margin = floats(p.at("margin"));
    prompts.push_back(std::move(f));
  }
  return prompts;
}

// llama.cpp's arithmetic: the 8-bit activation blocks every peer fixture was made with.
const std::map<std::string, core::OptionValue> kPeerArithmetic = {{"activations", std::string("q8")}};

struct Case {
  const char* fixture;              // under tests/fixtures/
  std::filesystem::path (*model)();  // NULL: the fixture's synthetic model
  const char* backend;
  std::size_t max_prompts;  // the slow scalar backend checks a subset
  std::size_t max_steps;
  std::uint32_t context = 512;  // the peer's n_ctx
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.fixture << " on " << c.backend; }

class GreedyFixture : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (GetParam().model == nullptr) {
      model_ = synthetic_model(GetParam().fixture);
    } else {
      model_ = GetParam().model();
    }
    if (!std::filesystem::exists(model_)) {
      GTEST_SKIP() << model_ << " is missing (tools/setup.sh installs the real models; "
                   << "../shared holds the tiny one)";
    }
  }
  TestHost host_;
  std::filesystem::path model_;
};

TEST_P(GreedyFixture, TeacherForcedLogitsMatchThePeer) {
  const Case& c = GetParam();
  ForwardRig rig(host_, model_, c.backend, kPeerArithmetic, c.context);
  double max_diff = 0;
  std::size_t steps = 0;
  auto prompts = load_fixture(c.fixture);
  prompts.resize(std::min(prompts.size(), c.max_prompts));
  for (const FixturePrompt& p : prompts) {
    rig.reset();
    const std::size_t n = std::min(p.generated.size(), c.max_steps);
    const std::vector<float>* logits = &rig.feed(p.prompt_ids);
    for (std::size_t s = 0; s < n; ++s) {
      const float a = (*logits)[static_cast<std::size_t>(p.top1[s])];
      const float b = (*logits)[static_cast<std::size_t>(p.top2[s])];
      max_diff = std::max({max_diff, std::fabs(double{a} - double{p.top1_logit[s]}),
                           std::fabs(double{b} - double{p.top2_logit[s]})});
      if (double{p.margin[s]} >= kMarginFloor) {
        const auto best = static_cast<std::int32_t>(
            std::max_element(logits->begin(), logits->end()) - logits->begin());
        EXPECT_EQ(best, p.top1[s]) << p.name << " step " << s << " (peer margin " << p.margin[s]
                                   << ")";
      }
      ++steps;
      if (s + 1 < n) logits = &rig.feed({p.generated[s]});
    }
  }
  std::printf("[ %s on %s ] %zu steps; max |logit - peer logit| = %.3g\n", c.fixture, c.backend,
              steps, max_diff);
  // Bit for bit: the kernels reproduce the peer's arithmetic (docs/peers.md), so any difference
  // is a difference of arithmetic, however small.
  EXPECT_EQ(max_diff, 0.0) << "logits differ from the peer's";
}

TEST_P(GreedyFixture, PromptsTokenizeAsThePeerTokenizedThem) {
  const Case& c = GetParam();
  if (c.model == nullptr) GTEST_SKIP() << "a synthetic model's prompts are token ids, not text";
  core::EngineConfig config;
  config.context_size = c.context;
  config.max_sequences = 1;
  auto engine = host_.engine(model_, c.backend, {"greedy"}, config, kPeerArithmetic);
  ASSERT_NE(engine, nullptr);
  for (const FixturePrompt& p : load_fixture(c.fixture)) {
    core::Tokenizer::EncodeOptions options;
    options.add_bos = p.add_bos;
    options.add_eos = false;
    options.parse_special = p.parse_special;
    auto ids = engine->tokenizer().encode(p.prompt, options);
    ASSERT_TRUE(ids) << p.name << ": " << ids.error();
    EXPECT_EQ(*ids, p.prompt_ids) << p.name;
  }
}

TEST_P(GreedyFixture, GreedyTokensMatchThePeer) {
  const Case& c = GetParam();
  core::EngineConfig config;
  config.context_size = c.context;
  config.max_sequences = 1;
  auto engine = host_.engine(model_, c.backend, {"greedy"}, config, kPeerArithmetic);
  ASSERT_NE(engine, nullptr);
  auto prompts = load_fixture(c.fixture);
  prompts.resize(std::min(prompts.size(), c.max_prompts));
  for (const FixturePrompt& p : prompts) {
    lpx_request request{};
    request.prompt_tokens = p.prompt_ids.data();
    request.prompt_token_count = p.prompt_ids.size();
    const std::size_t n = std::min(p.generated.size(), c.max_steps);
    request.max_tokens = static_cast<std::uint32_t>(n);
    const Generation g = generate(*engine, request);
    ASSERT_TRUE(g.error.empty()) << p.name << ": " << g.error;
    std::size_t comparable = n;
    for (std::size_t s = 0; s < n; ++s) {
      if (double{p.margin[s]} < kMarginFloor) {
        comparable = s + 1;  // this step's token may differ; nothing after it is comparable
        break;
      }
    }
    for (std::size_t s = 0; s < comparable && s < p.generated.size(); ++s) {
      if (double{p.margin[s]} < kMarginFloor) break;
      ASSERT_LT(s, g.tokens.size()) << p.name << ": stopped early at step " << s;
      ASSERT_EQ(g.tokens[s], p.generated[s]) << p.name << ": first difference at step " << s;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Peer, GreedyFixture,
    ::testing::Values(Case{"greedy/smollm2-135m-instruct-q4_1.json", &smollm2_path, "cpu", 100, 64},
                      Case{"greedy/llama-2-tiny-random.json", &tiny_llama_path, "cpu", 100, 64},
                      Case{"greedy/smollm2-135m-instruct-q4_1.json", &smollm2_path, "cpu-scalar", 2, 12},
                      Case{"greedy/llama-2-tiny-random.json", &tiny_llama_path, "cpu-scalar", 3, 64},
                      Case{"greedy/gemma3-270m-q4_k_m.json", &gemma3_path, "cpu", 100, 64},
                      Case{"greedy/gemma3-270m-q4_k_m-long.json", &gemma3_path, "cpu", 100, 64, 1024},
                      Case{"greedy/gemma3-270m-q4_k_m.json", &gemma3_path, "cpu-scalar", 2, 8},
                      // Synthetic models of each family (written from the fixture's synth spec).
                      Case{"families/qwen3.json", nullptr, "cpu", 100, 16, 256},
                      Case{"families/gemma2.json", nullptr, "cpu", 100, 16, 256},
                      Case{"families/gemma3.json", nullptr, "cpu", 100, 16, 1024},
                      Case{"families/phi3.json", nullptr, "cpu", 100, 16, 256},
                      Case{"families/smollm3.json", nullptr, "cpu", 100, 16, 256},
                      Case{"families/granite.json", nullptr, "cpu", 100, 16, 256},
                      Case{"families/qwen3.json", nullptr, "cpu-scalar", 1, 4, 256},
                      Case{"families/gemma3.json", nullptr, "cpu-scalar", 2, 2, 1024}),
    [](const ::testing::TestParamInfo<Case>& param_info) {
      std::string fixture = param_info.param.fixture;
      fixture = fixture.substr(fixture.find('/') + 1);
      fixture = fixture.substr(0, fixture.find('.'));  // gemma3-270m-q4_k_m[-long], qwen3
      if (fixture.starts_with("smollm2") || fixture.starts_with("llama-2")) fixture = fixture.substr(0, 7);
      if (param_info.param.model == nullptr) fixture = "synthetic_" + fixture;
      std::string name = fixture + "_" + param_info.param.backend;
      std::replace_if(name.begin(), name.end(), [](char ch) { return !std::isalnum(ch); }, '_');
      return name;
    });

}  // namespace
}  // namespace lpx::test
