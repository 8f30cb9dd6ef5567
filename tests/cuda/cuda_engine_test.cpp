// The cuda backend end to end against the CPU engine on real models: the same forward pass
// (teacher-forced logits), the same greedy tokens under the margin rule, and continuous
// batching on the GPU with sequences joining and leaving. Skips, saying why, where no CUDA GPU
// is usable.
//
// The reference is the cpu backend with f32 activations: the arithmetic the cuda backend
// implements (lpx/kinds/quant_backend.h). Only summation order differs, so logits agree to
// about 1e-3; a greedy token may differ only where the CPU's top-2 margin is below twice the
// logit tolerance (each of the two may be off by it).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <set>
#include <thread>

#include "cuda/gpu_test_support.hpp"
#include "engine/engine_test_support.hpp"
#include "quantize/quantize_model.hpp"
#include "synth/model_shapes.hpp"
#include "synth/synthetic_model.hpp"

namespace lpx::test {
namespace {

constexpr double kLogitTolerance = 2e-2;  // |gpu - cpu| per logit (per 10 units of logit
                                          // scale), f32 arithmetic both sides

const std::map<std::string, core::OptionValue> kCpuF32 = {{"activations", std::string("f32")}};

std::int32_t argmax(const std::vector<float>& v) {
  return static_cast<std::int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

// The largest |gpu - cpu| a logit may show in a row whose largest |logit| is `max_logit`:
// summation-order differences grow with the logits' scale (random-weight models are not tuned
// to a trained model's range), so the tolerance is per 10 units of the largest logit.
double logit_tolerance(double max_logit) { return kLogitTolerance * std::max(1.0, max_logit / 10.0); }

double top2_margin(const std::vector<float>& v) {
  float first = -INFINITY;
  float second = -INFINITY;
  for (float x : v) {
    if (x > first) {
      second = first;
      first = x;
    } else if (x > second) {
      second = x;
    }
  }
  return double{first} - double{second};
}

// Whether the CPU's pick in `logits` must also be the GPU's: two logits each within the
// tolerance can swap only when their gap is below twice it (a fixed margin would call
// summation-order flips of large-scale logits failures).
bool pick_is_certain(const std::vector<float>& logits) {
  double max_logit = 0;
  for (float x : logits) max_logit = std::max(max_logit, std::fabs(double{x}));
  return top2_margin(logits) >= 2 * logit_tolerance(max_logit);
}

// A model file, or a synthetic model (synth:NAME:TYPE: random weights in the exact shapes of a
// real model, written once into the temp directory). The synthetic ones reach what the tiny
// model cannot: quantized weights, 64-wide heads (flash-decoding attention), grouped KV heads,
// 24-30 layers, the stacked and interleaved matrices, and q/k/v biases (Qwen2). The other
// families' synthetic models keep `layers` of their layers (enough for every kind of layer:
// Gemma 3's five local and one global, SmolLM3's NoPE fourth) and run prompts longer than
// their sliding windows, so the windows cut.
struct ModelCase {
  const char* name;
  std::filesystem::path (*path)();  // null for a synthetic model
  const char* synth_spec;           // synth:NAME:TYPE, or a shape name with `layers` below
  std::uint32_t layers = 0;         // > 0: the shape synth_spec names, cut to this many layers
  std::vector<std::size_t> prompts = {5, 100, 300};
  const char* type = "Q8_0";        // with `layers`: a synth type, or Q4_K_M (see family_model)
};

// The shape `like` with its first `layers` layers and at most 32768 tokens (the prompts use
// ids below 256; a smaller head keeps the CPU reference quick), as TYPE (seed 1), written once
// into the temp directory. The real 262k-token head runs in the gemma3_270m case. TYPE Q4_K_M
// is the F16 model through the quantizer's Q4_K_M mix, as users' files are made: attn_v and
// ffn_down take Q6_K in some layers, so those layers' q, k and v cannot be stacked and run as
// three GEMVs.
core::Expected<std::filesystem::path> family_model(const std::string& like,
                                                   const std::string& type,
                                                   std::uint32_t layers) {
  const core::synth::ModelShape* known = core::synth::find_model_shape(like);
  if (known == nullptr) return core::not_found("unknown synth shape " + like);
  core::synth::ModelShape shape = *known;
  shape.n_layer = layers;
  shape.n_vocab = std::min<std::uint32_t>(shape.n_vocab, 32768);
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
      ("lpx-synth-v4-" + like + "-" + type + "-" + std::to_string(layers) + "layers-32k.gguf");
  if (std::filesystem::exists(path)) return path;
  const std::filesystem::path partial = path.string() + "." + std::to_string(::getpid());
  if (type == "Q4_K_M") {
    auto f16 = family_model(like, "F16", layers);
    if (!f16) return f16;
    core::QuantizeOptions options;
    options.mix = core::QuantMix::Q4_K_M;
    auto quantized = core::quantize_model(f16->string(), partial.string(), options);
    if (!quantized) return tl::unexpected(quantized.error());
  } else {
    auto written = core::synth::write_synthetic_model(shape, *core::synth::synth_type(type), 1,
                                                      partial.string());
    if (!written) return tl::unexpected(written.error());
  }
  std::filesystem::rename(partial, path);
  return path;
}

void PrintTo(const ModelCase& c, std::ostream* os) { *os << c.name; }

class CudaEngine : public ::testing::TestWithParam<ModelCase> {
 protected:
  void SetUp() override {
    LPX_REQUIRE_GPU();
    if (GetParam().layers > 0) {
      auto path = family_model(GetParam().synth_spec, GetParam().type, GetParam().layers);
      ASSERT_TRUE(path.has_value()) << path.error().message;
      path_ = *path;
    } else if (GetParam().synth_spec != nullptr) {
      auto path = core::synth::resolve_model_spec(GetParam().synth_spec);
      ASSERT_TRUE(path.has_value()) << path.error();
      path_ = *path;
    } else {
      path_ = GetParam().path();
    }
    if (!std::filesystem::exists(path_)) {
      GTEST_SKIP() << path_ << " is missing (tools/setup.sh installs it)";
    }
  }
  const std::filesystem::path& model_path() const { return path_; }
  TestHost host_;

 private:
  std::filesystem::path path_;
};

// A prompt long enough for the cuBLAS prefill path (> 64 rows), then decode steps.
std::vector<std::int32_t> test_prompt(std::size_t length) {
  std::vector<std::int32_t> prompt;
  for (std::size_t i = 0; i < length; ++i) prompt.push_back(static_cast<std::int32_t>(1 + (i * 37) % 200));
  return prompt;
}

// Prompts of 5 tokens (GEMV prefill), 100 (cuBLAS prefill) and 300 (attention over two chunks
// of 256 positions, merged; decode steps through the graphs), and for windowed families one
// longer than the window.
TEST_P(CudaEngine, TeacherForcedLogitsMatchTheCpu) {
  for (std::size_t prompt_length : GetParam().prompts) {
    ForwardRig cpu_run(host_, model_path(), "cpu", kCpuF32);
    ForwardRig gpu_run(host_, model_path(), "cuda", {});
    std::vector<std::int32_t> next = test_prompt(prompt_length);
    double max_diff = 0;
    double max_logit = 0;
    for (int step = 0; step < 24; ++step) {
      const std::vector<float>& a = cpu_run.feed(next);
      const std::vector<float>& b = gpu_run.feed(next);
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t i = 0; i < a.size(); ++i) {
        ASSERT_TRUE(std::isfinite(b[i])) << "step " << step << " logit " << i;
        max_diff = std::max(max_diff, std::fabs(double{a[i]} - double{b[i]}));
        max_logit = std::max(max_logit, std::fabs(double{a[i]}));
      }
      if (pick_is_certain(a)) {
        EXPECT_EQ(argmax(b), argmax(a)) << "step " << step;
      }
      next = {argmax(a)};
    }
    std::printf("[ %s, prompt %zu ] max |gpu - cpu| logit = %.3g (largest |logit| %.3g)\n",
                GetParam().name, prompt_length, max_diff, max_logit);
    EXPECT_LE(max_diff, logit_tolerance(max_logit))
        << "prompt of " << prompt_length << " tokens";
  }
}

// Greedy tokens of the GPU engine, several requests at once (continuous batching, CUDA graphs
// for the decode steps), equal to the CPU engine's up to the first low-margin step.
TEST_P(CudaEngine, GreedyTokensMatchTheCpuWithSequencesJoiningAndLeaving) {
  core::EngineConfig config;
  config.context_size = 512;
  config.max_sequences = 4;
  config.kv_cache_tokens = 2048;
  auto gpu = host_.engine(model_path(), "cuda", {"greedy"}, config);
  ASSERT_NE(gpu, nullptr);
  const std::vector<std::size_t> lengths = {3, 17, 70, 9, 130, 33};
  const std::vector<std::uint32_t> max_tokens = {40, 8, 25, 60, 12, 30};
  std::vector<Generation> results(lengths.size());
  std::vector<std::vector<std::int32_t>> prompts;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    auto p = test_prompt(lengths[i]);
    p[0] = static_cast<std::int32_t>(1 + i);  // distinct prompts
    prompts.push_back(std::move(p));
  }
  // Six requests on four slots, started a little apart: some join while others decode, and the
  // short ones leave early.
  std::vector<std::thread> clients;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    clients.emplace_back([&, i] {
      std::this_thread::sleep_for(std::chrono::milliseconds(5 * i));
      lpx_request request{};
      request.prompt_tokens = prompts[i].data();
      request.prompt_token_count = prompts[i].size();
      request.max_tokens = max_tokens[i];
      request.flags = 0;
      results[i] = generate(*gpu, request);
    });
  }
  for (auto& c : clients) c.join();
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    ASSERT_TRUE(results[i].error.empty()) << results[i].error;
    ForwardRig cpu(host_, model_path(), "cpu", kCpuF32);
    std::vector<std::int32_t> next = prompts[i];
    for (std::size_t s = 0; s < results[i].tokens.size(); ++s) {
      const std::vector<float>& logits = cpu.feed(next);
      const std::int32_t expected = argmax(logits);
      if (!pick_is_certain(logits)) break;  // later tokens are not comparable
      ASSERT_EQ(results[i].tokens[s], expected) << "request " << i << " step " << s;
      next = {expected};
    }
  }
  lpx_engine_stats stats{};
  gpu->stats(stats);
  EXPECT_EQ(stats.kv_blocks_used, 0u);
  EXPECT_EQ(stats.running_requests, 0u);
}

// A GPU engine on the synthetic SmolLM2-135M Q4_1 (the default model's shapes and types) with
// `sequences` slots of `context` tokens each.
std::unique_ptr<core::Engine> synthetic_smollm2_engine(TestHost& host,
                                                       const std::vector<std::string>& chain,
                                                       std::uint32_t context,
                                                       std::uint32_t sequences,
                                                       std::filesystem::path* model = nullptr) {
  auto path = core::synth::resolve_model_spec("synth:smollm2-135m:Q4_1");
  EXPECT_TRUE(path.has_value()) << path.error();
  if (!path) return nullptr;
  if (model != nullptr) *model = *path;
  core::EngineConfig config;
  config.context_size = context;
  config.max_sequences = sequences;
  config.kv_cache_tokens = sequences * 64 + context;
  return host.engine(*path, "cuda", chain, config);
}

// The same bits, logit for logit.
void expect_same_bits(const std::vector<float>& got, const std::vector<float>& expected,
                      int step) {
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(expected[i]))
        << "step " << step << " logit " << i;
  }
}

// Every decode graph bucket (1, 2, 4, ..., 64 rows: 64 requests that leave a few at a time)
// and decoding past position 656 (a 650-token prompt generating 24 more, admitted when a slot
// frees): each request's greedy tokens equal the CPU's wherever the CPU's pick is certain.
TEST(CudaEngineBuckets, GreedyTokensMatchTheCpuInEveryGraphBucketAndPastPosition656) {
  LPX_REQUIRE_GPU();
  TestHost host;
  std::filesystem::path model;
  auto gpu = synthetic_smollm2_engine(host, {"greedy"}, 768, 64, &model);
  ASSERT_NE(gpu, nullptr);

  std::vector<std::vector<std::int32_t>> prompts;
  std::vector<lpx_request> requests(65);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const bool long_one = i == 64;
    prompts.push_back(test_prompt(long_one ? 650 : 3 + i % 7));
    prompts.back()[0] = static_cast<std::int32_t>(1 + i);  // distinct prompts
  }
  for (std::size_t i = 0; i < requests.size(); ++i) {
    lpx_request& r = requests[i];
    r.prompt_tokens = prompts[i].data();
    r.prompt_token_count = prompts[i].size();
    r.max_tokens = i == 64 ? 24 : static_cast<std::uint32_t>(2 + i / 2);  // 2..33: rows fall step by step
    r.flags = LPX_REQUEST_IGNORE_END_OF_GENERATION;
  }
  const std::vector<Generation> runs = generate_together(*gpu, requests);

  for (std::size_t i = 0; i < runs.size(); ++i) {
    ASSERT_TRUE(runs[i].error.empty()) << "request " << i << ": " << runs[i].error;
    ASSERT_EQ(runs[i].tokens.size(), requests[i].max_tokens) << "request " << i;
    ForwardRig cpu(host, model, "cpu", kCpuF32);
    std::vector<std::int32_t> next = prompts[i];
    for (std::size_t s = 0; s < runs[i].tokens.size(); ++s) {
      const std::vector<float>& logits = cpu.feed(next);
      if (!pick_is_certain(logits)) break;  // later tokens are not comparable
      ASSERT_EQ(runs[i].tokens[s], argmax(logits)) << "request " << i << " step " << s;
      next = {argmax(logits)};
    }
  }
  lpx_engine_stats stats{};
  gpu->stats(stats);
  EXPECT_EQ(stats.kv_blocks_used, 0u);
}

// Sampling programs on the device (top-k, top-p, temperature, a seeded draw) through the engine:
// each request's tokens equal those the same chain samples on the host from the same logits
// (a request asking for log-probabilities takes the host path, draw for draw; logits do not
// depend on the batch a row runs in, so both runs see the same bits). Several requests at once
// (the programs' graph buckets), each with its own seed. The device may differ from the host
// where a top-p or dist decision lies within 2^-22 of its threshold (launch.hpp); with these
// fixed seeds that either never happens or always does.
TEST(CudaEngineSampling, DeviceProgramsPickWhatTheHostChainPicks) {
  LPX_REQUIRE_GPU();
  TestHost host;
  // The backend runs programs (else both runs would sample on the host); that this chain is a
  // program is tests/engine/sampling_program_test.cpp's, on the same plugins.
  auto backend = core::default_instance(host.registry(), "cuda");
  ASSERT_TRUE(backend.has_value()) << backend.error().message;
  ASSERT_TRUE(backend->instance->library().supports("device-sampling"));
  auto gpu = synthetic_smollm2_engine(host, {"top-k", "top-p", "temperature", "dist"}, 256, 8);
  ASSERT_NE(gpu, nullptr);

  constexpr std::size_t kRequests = 6;
  std::vector<std::vector<std::int32_t>> prompts;
  std::vector<lpx_sampling_overrides> seeds(kRequests);
  for (std::size_t i = 0; i < kRequests; ++i) {
    prompts.push_back(test_prompt(3 + 2 * i));
    prompts.back()[0] = static_cast<std::int32_t>(1 + i);
    seeds[i].struct_size = sizeof(lpx_sampling_overrides);
    seeds[i].set = LPX_SET_SEED | LPX_SET_TEMPERATURE;
    seeds[i].seed = 1000 + i;
    seeds[i].temperature = 1.5;  // flatter than the default 0.8: the draws matter
  }
  const auto run = [&](bool logprobs) {
    std::vector<lpx_request> requests(kRequests);
    for (std::size_t i = 0; i < kRequests; ++i) {
      lpx_request& r = requests[i];
      r.prompt_tokens = prompts[i].data();
      r.prompt_token_count = prompts[i].size();
      r.max_tokens = 24;
      r.sampling = &seeds[i];
      r.logprobs = logprobs ? 1 : 0;
      r.flags = LPX_REQUEST_IGNORE_END_OF_GENERATION;
    }
    return generate_together(*gpu, requests);
  };
  const std::vector<Generation> on_device = run(false);
  const std::vector<Generation> on_host = run(true);
  std::set<std::int32_t> distinct;
  for (std::size_t i = 0; i < kRequests; ++i) {
    ASSERT_TRUE(on_device[i].error.empty()) << on_device[i].error;
    ASSERT_TRUE(on_host[i].error.empty()) << on_host[i].error;
    ASSERT_EQ(on_device[i].tokens.size(), 24u);
    EXPECT_EQ(on_device[i].tokens, on_host[i].tokens) << "request " << i;
    distinct.insert(on_device[i].tokens.begin(), on_device[i].tokens.end());
  }
  // The chain samples (a greedy pick of random-weight logits would repeat itself).
  EXPECT_GT(distinct.size(), 20u);
}

// The synthetic SmolLM2-135M Q4_1, then 2-layer bf16 models of the shapes `like` names.
std::vector<std::filesystem::path> bit_exactness_models(const std::vector<std::string>& like) {
  std::vector<std::filesystem::path> models;
  auto smollm2 = core::synth::resolve_model_spec("synth:smollm2-135m:Q4_1");
  EXPECT_TRUE(smollm2.has_value()) << smollm2.error();
  if (smollm2) models.push_back(*smollm2);
  for (const std::string& shape : like) {
    auto path = family_model(shape, "BF16", 2);
    EXPECT_TRUE(path.has_value()) << path.error().message;
    if (path) models.push_back(*path);
  }
  return models;
}

// The persistent decode kernel (backend option megakernel) runs the graph path's thread
// blocks as work items: every logit of every batch-1 step must be the same bits as the graphs
// give, past the first attention splits (positions 100-130: four chunks of 32), on a Q4_1 file
// shaped like SmolLM2 (a Q8_0 head) and bf16 Llama- and Qwen-shaped ones (q/k/v biases).
TEST(CudaMegakernel, GivesTheGraphsLogitsBitForBit) {
  LPX_REQUIRE_GPU();
  TestHost host;
  const auto models = bit_exactness_models({"llama-3.2-1b", "qwen2.5-0.5b"});
  ASSERT_EQ(models.size(), 3u);
  for (const std::filesystem::path& model : models) {
    SCOPED_TRACE(model.filename().string());
    ForwardRig graphs(host, model, "cuda");
    ForwardRig megakernel(host, model, "cuda", {{"megakernel", true}});
    std::vector<std::int32_t> next = test_prompt(100);
    for (int step = 0; step < 30; ++step) {
      const std::vector<float> expected = graphs.feed(next);
      expect_same_bits(megakernel.feed(next), expected, step);
      if (HasFatalFailure()) return;
      next = {argmax(expected)};
    }
  }
}

// Kernel overlap (programmatic dependent launch, backend option overlap) moves no bit: every
// kernel that starts early reads before its wait only what no earlier kernel of the step
// writes (weights, uploaded inputs, K/V history). The whole model's logits with and without
// it, through a prefill (gather, argmax over rows) and decode steps through the graphs
// (rope_and_store per head, split-K attention with its prefetch, the fused head and
// argmax_finish). One rig at a time: the option is the process's.
TEST(CudaOverlap, ChangesNoBitOfTheLogits) {
  LPX_REQUIRE_GPU();
  TestHost host;
  const auto models = bit_exactness_models({"qwen2.5-0.5b"});
  ASSERT_EQ(models.size(), 2u);
  const auto run = [&](const std::filesystem::path& model, bool overlap) {
    ForwardRig rig(host, model, "cuda", {{"overlap", overlap}});
    std::vector<std::vector<float>> logits;
    std::vector<std::int32_t> next = test_prompt(100);
    for (int step = 0; step < 20; ++step) {
      logits.push_back(rig.feed(next));
      next = {argmax(logits.back())};
    }
    return logits;
  };
  for (const std::filesystem::path& model : models) {
    SCOPED_TRACE(model.filename().string());
    const std::vector<std::vector<float>> with = run(model, true);
    const std::vector<std::vector<float>> without = run(model, false);
    for (std::size_t step = 0; step < with.size(); ++step) {
      expect_same_bits(without[step], with[step], static_cast<int>(step));
      if (HasFatalFailure()) return;
    }
  }
}

// Requests submitted together, each collected into a Generation; request i's client cancels
// it (its token callback returns 1) once it has cancel_after[i] tokens (0: never).
std::vector<Generation> run_cancelling(core::Engine& engine, std::vector<lpx_request> requests,
                                       const std::vector<std::size_t>& cancel_after) {
  struct Client {
    Generation g;
    std::size_t cancel_after = 0;
  };
  std::vector<Client> clients(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    clients[i].cancel_after = cancel_after[i];
    requests[i].struct_size = sizeof(lpx_request);
    requests[i].user = &clients[i];
    requests[i].on_token = [](void* user, const lpx_token_event* e) -> std::int32_t {
      auto& c = *static_cast<Client*>(user);
      if (e->token >= 0) c.g.tokens.push_back(e->token);
      return c.cancel_after != 0 && c.g.tokens.size() >= c.cancel_after ? 1 : 0;
    };
    requests[i].on_done = [](void* user, const lpx_request_result* r) {
      auto& c = *static_cast<Client*>(user);
      c.g.finish_reason = r->finish_reason;
      c.g.error = r->error != nullptr ? r->error->message : "";
    };
  }
  auto ids = engine.submit_together(requests);
  EXPECT_TRUE(ids.has_value()) << (ids ? "" : ids.error().message);
  std::vector<Generation> out;
  if (!ids) return out;
  for (std::uint64_t id : *ids) engine.wait(id);
  for (Client& c : clients) out.push_back(std::move(c.g));
  return out;
}

// Queued steps ([engine] overlap_steps, dense_device_queue.cpp): step N + 1 is launched before
// step N's picks are read, its tokens taken from argmax_ on the device, through the graphs
// (every bucket the batch passes through) and the persistent kernel. Ten greedy or seeded
// sampled requests on four slots (the waiting ones cannot join while the slots are full, so
// steps go on queued), every third cancelled by its client after four tokens (its queued row
// discarded, its blocks given to a waiting request): the tokens of steps run one at a time,
// every block back, and the queued runs really queued.
TEST(CudaQueuedSteps, GiveTheTokensOfStepsRunOneAtATime) {
  LPX_REQUIRE_GPU();
  TestHost host;
  auto path = core::synth::resolve_model_spec("synth:smollm2-135m:Q4_1");
  ASSERT_TRUE(path.has_value()) << path.error();
  constexpr std::size_t kRequests = 10;
  std::vector<std::vector<std::int32_t>> prompts;
  std::vector<lpx_sampling_overrides> sampling(kRequests);
  std::vector<std::size_t> cancel_after(kRequests);
  for (std::size_t i = 0; i < kRequests; ++i) {
    prompts.push_back(test_prompt(i == 3 ? 90 : 1 + i));  // one prefilled by cuBLAS
    prompts.back()[0] = static_cast<std::int32_t>(1 + i);
    sampling[i].struct_size = sizeof(lpx_sampling_overrides);
    sampling[i].set = LPX_SET_SEED | LPX_SET_TEMPERATURE | LPX_SET_TOP_K;
    sampling[i].seed = 70 + i;
    sampling[i].temperature = 1.3;
    sampling[i].top_k = 40;
    cancel_after[i] = i % 3 == 1 ? 4 : 0;
  }
  const auto run = [&](bool overlap, bool megakernel, std::size_t requests, bool sampled) {
    core::EngineConfig config;
    config.context_size = 256;
    config.max_sequences = 4;
    config.overlap_steps = overlap;
    auto gpu = host.engine(*path, "cuda", {"greedy"}, config, {{"megakernel", megakernel}});
    EXPECT_NE(gpu, nullptr);
    std::vector<Generation> out;
    if (gpu == nullptr) return out;
    std::vector<lpx_request> batch(requests);
    for (std::size_t i = 0; i < requests; ++i) {
      batch[i].prompt_tokens = prompts[i].data();
      batch[i].prompt_token_count = prompts[i].size();
      batch[i].max_tokens = static_cast<std::uint32_t>(6 + 5 * (i % 4));
      batch[i].flags = LPX_REQUEST_IGNORE_END_OF_GENERATION;
      if (sampled) batch[i].sampling = &sampling[i];
    }
    const std::vector<std::size_t> cancels(
        cancel_after.begin(), cancel_after.begin() + static_cast<std::ptrdiff_t>(requests));
    out = run_cancelling(*gpu, batch, cancels);
    EXPECT_EQ(gpu->steps_queued_behind() > 0, overlap) << "overlap " << overlap;
    lpx_engine_stats stats{};
    gpu->stats(stats);
    EXPECT_EQ(stats.kv_blocks_used, 0u);
    return out;
  };
  const auto expect_same = [&](const std::vector<Generation>& a, const std::vector<Generation>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      ASSERT_TRUE(a[i].error.empty()) << a[i].error;
      ASSERT_TRUE(b[i].error.empty()) << b[i].error;
      EXPECT_EQ(a[i].tokens, b[i].tokens) << "request " << i;
      if (cancel_after[i] != 0) {
        EXPECT_EQ(a[i].finish_reason, LPX_FINISH_CANCELLED) << "request " << i;
        EXPECT_EQ(a[i].tokens.size(), cancel_after[i]) << "request " << i;
      }
    }
  };
  for (bool sampled : {false, true}) {
    SCOPED_TRACE(sampled ? "sampled" : "greedy");
    expect_same(run(true, false, kRequests, sampled), run(false, false, kRequests, sampled));
  }
  SCOPED_TRACE("the persistent kernel, one sequence");
  expect_same(run(true, true, 1, false), run(false, false, 1, false));
}

// Asked of a model it is not built for, the option is refused at load, saying why.
TEST(CudaMegakernel, IsRefusedSayingWhyForAModelItIsNotBuiltFor) {
  LPX_REQUIRE_GPU();
  TestHost host;
  auto gemma = family_model("gemma3-1b", "Q8_0", 6);  // an embedding scale, post-norms
  ASSERT_TRUE(gemma.has_value()) << gemma.error().message;
  try {
    ForwardRig rig(host, *gemma, "cuda", {{"megakernel", true}});
    FAIL() << "the persistent kernel accepted a model with post-norms";
  } catch (const std::exception& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("megakernel = true: "), std::string::npos) << message;
    EXPECT_NE(message.find("an embedding scale"), std::string::npos) << message;
    EXPECT_NE(message.find("layer 0: post-norms"), std::string::npos) << message;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, CudaEngine,
                         ::testing::Values(ModelCase{"tiny_llama", &tiny_llama_path, nullptr},
                                           ModelCase{"smollm2", &smollm2_path, nullptr},
                                           ModelCase{"synthetic_smollm2_q4_1", nullptr,
                                                     "synth:smollm2-135m:Q4_1"},
                                           ModelCase{"synthetic_qwen2_q8_0", nullptr,
                                                     "synth:qwen2.5-0.5b:Q8_0"},
                                           ModelCase{"gemma3_270m_q4_k_m", &gemma3_path, nullptr,
                                                     0, {5, 100, 600}},
                                           ModelCase{"synthetic_qwen3", nullptr, "qwen3-0.6b", 3},
                                           ModelCase{"synthetic_gemma3", nullptr, "gemma3-1b", 6,
                                                     {5, 100, 600}},
                                           ModelCase{"synthetic_gemma2", nullptr, "gemma2-2b", 2,
                                                     {5, 300}},
                                           ModelCase{"synthetic_phi3", nullptr, "phi3-mini", 2},
                                           ModelCase{"synthetic_smollm3", nullptr, "smollm3-3b", 4},
                                           ModelCase{"synthetic_granite", nullptr,
                                                     "granite-3.3-2b", 2},
                                           // bf16 weights end to end (Llama-3.2-1B's shape).
                                           ModelCase{"synthetic_llama_bf16", nullptr,
                                                     "llama-3.2-1b", 2, {5, 100, 300}, "BF16"},
                                           // A Q4_K_M file: Q4_K and Q6_K, q/k/v unstacked
                                           // in its second layer.
                                           ModelCase{"synthetic_llama_q4_k_m", nullptr,
                                                     "llama-3.2-1b", 2, {5, 100, 300},
                                                     "Q4_K_M"}),
                         [](const ::testing::TestParamInfo<ModelCase>& param_info) {
                           return std::string(param_info.param.name);
                         });

// `--device cuda` on a machine without a usable GPU fails at once, saying why.
TEST(CudaDevice, BackendCreationSaysWhyWhenNoGpu) {
  std::string why;
  TestHost host;
  auto instance = core::default_instance(host.registry(), "cuda");
  if (gpu_available(&why)) {
    EXPECT_TRUE(instance.has_value()) << instance.error();
  } else {
    ASSERT_FALSE(instance.has_value());
    EXPECT_NE(instance.error().message.find("CUDA is not usable"), std::string::npos) << instance.error().message;
  }
}

TEST(CudaDevice, AnIndexPastTheLastGpuIsRefused) {
  LPX_REQUIRE_GPU();
  TestHost host;
  auto instance = core::default_instance(host.registry(), "cuda", {{"gpu", std::int64_t{1000}}});
  ASSERT_FALSE(instance.has_value());
  EXPECT_NE(instance.error().message.find("does not exist"), std::string::npos) << instance.error().message;
}

// model_load refuses a description needing features its kernels lack, naming them, before it
// allocates anything: the device's free memory is the same before and after.
TEST(CudaDevice, ADescriptionWithUnsupportedFeaturesIsRefusedBeforeAllocating) {
  LPX_REQUIRE_GPU();
  TestHost host;
  auto instance = core::default_instance(host.registry(), "cuda");
  ASSERT_TRUE(instance.has_value()) << instance.error();
  auto backend = core::Backend::adopt(instance->instance);
  ASSERT_TRUE(backend.has_value()) << backend.error();
  EXPECT_EQ(backend->model_features(), LPX_MODEL_FEATURES_2_0);  // every feature of 2.0

  core::TransformerModel model;
  lpx_transformer_desc& d = model.desc();
  d.architecture = "made-up";
  d.n_layer = 1;
  d.n_embd = 64;
  d.n_head = 4;
  d.n_head_kv = 4;
  d.head_dim = 16;
  d.n_ff = 128;
  d.n_vocab = 32;
  d.kv_block_size = 16;
  d.kv_blocks = 4;
  d.max_rows = 8;
  d.max_sequences = 1;
  d.max_context = 64;
  d.layer_stride = sizeof(lpx_transformer_layer);
  // A feature of a later minor version (no tensors: nothing may be read).
  constexpr std::uint64_t kLaterFeature = std::uint64_t{1} << 40;
  d.features = LPX_FEATURE_QK_NORM | kLaterFeature;
  std::size_t free_before = 0, free_after = 0, total = 0;
  ASSERT_TRUE(cuda_ok(cudaMemGetInfo(&free_before, &total)));
  try {
    lpx_device_model_info info{};
    backend->load_model(d, info);
    FAIL() << "a model needing a feature unknown to the backend was loaded";
  } catch (const core::EngineError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("it lacks feature bit 1099511627776"), std::string::npos) << message;
  }
  ASSERT_TRUE(cuda_ok(cudaMemGetInfo(&free_after, &total)));
  EXPECT_EQ(free_after, free_before);
  // And the engine's own check says the same before it gets that far.
  auto refused = backend->check_features(d);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("cannot run this made-up model"), std::string::npos);
}

}  // namespace
}  // namespace lpx::test
