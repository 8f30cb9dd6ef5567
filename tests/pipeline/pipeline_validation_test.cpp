// Whole-file validation: every problem reported, each with file:line:column.
#include "pipeline/pipeline.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_support.hpp"
#include "util/did_you_mean.hpp"

namespace lpx::core {
namespace {

class PipelineValidation : public ::testing::Test {
 protected:
  Expected<Pipeline, Diagnostics> load(const std::string& text,
                                       const std::vector<std::string>& overrides = {}) {
    path = (dir / "p.toml").string();
    test::write_file(path, text);
    return load_pipeline(path, overrides, registry);
  }
  // The diagnostics as "line:col: message" lines, without the file name.
  static std::vector<std::string> lines(const Diagnostics& diagnostics) {
    std::vector<std::string> out;
    for (const Diagnostic& d : diagnostics.items()) {
      out.push_back(std::to_string(d.where.line) + ":" + std::to_string(d.where.column) + ": " +
                    d.message);
    }
    return out;
  }

  test::TempDir dir;
  std::string path;
  MetricsRegistry metrics;
  HostServices services{metrics};
  PluginRegistry registry{{LPX_TEST_GOOD_PLUGIN_DIR, LPX_BUILTIN_PLUGIN_DIR}, services};
};

TEST_F(PipelineValidation, AValidFileResolvesEveryOption) {
  auto pipeline = load(R"([pipeline]
name = "demo"
[sampler]
plugin = "greedy"
[transport]
plugin = "test-transport"
output = "/tmp/x"
count = 3
tags = ["a"]
)");
  ASSERT_TRUE(pipeline) << pipeline.error().to_string();
  EXPECT_EQ(pipeline->name, "demo");
  ASSERT_EQ(pipeline->sections.size(), 2u);
  EXPECT_EQ(pipeline->sections[0].slot, "sampler");
  const ResolvedOptions& options = pipeline->find("transport")->options;
  EXPECT_EQ(std::get<std::int64_t>(options.values.at("count")), 3);
  EXPECT_EQ(std::get<std::string>(options.values.at("message")), "hello") << "default applied";
}

TEST_F(PipelineValidation, ReportsEveryErrorTogetherWithPositions) {
  auto pipeline = load(R"([pipeline]
nmae = "typo"

[sampler]
plugin = "greedyy"

[transport]
plugin = "test-transport"
count = "three"
ratio = 1.5
mode = "fast"
extra = 1

[modle]
plugin = "x"
)");
  ASSERT_FALSE(pipeline);
  const std::vector<std::string> expected = {
      "2:1: unknown key 'nmae' in [pipeline] (did you mean 'name'?); known keys: name, description",
      "5:10: unknown plugin 'greedyy' (did you mean 'greedy'?); known plugins: " +
          join_or_none(registry.names()),
      "7:1: [transport] is missing required key 'output' (a string: File to write)",
      "9:9: 'transport.count': expected an integer, found a string",
      "10:9: 'transport.ratio': 1.5 is out of range [0, 1]",
      "11:8: 'transport.mode': 'fast' is not one of: echo, fail, wait",
      "12:1: unknown key 'extra' in [transport]; known keys: plugin, output, message, mode, count, "
      "ratio, loud, tags, ids",
      "14:2: unknown table 'modle' (did you mean 'model'?); known tables: pipeline, engine, "
      "speculative, model, models, backend, sampler, transport",
  };
  EXPECT_EQ(lines(pipeline.error()), expected);
  for (const Diagnostic& d : pipeline.error().items()) EXPECT_EQ(d.where.file, path);
}

TEST_F(PipelineValidation, TheModelSlotOwnsItsPathKey) {
  auto missing = load("[model]\nplugin = \"gguf\"\npth = \"m.gguf\"\n[transport]\nplugin = "
                      "\"test-transport\"\noutput = \"o\"\n");
  ASSERT_FALSE(missing);
  EXPECT_EQ(lines(missing.error()),
            (std::vector<std::string>{
                "1:1: [model] is missing required key 'path' (a string: Model file (or Hugging Face directory) to load)",
                "3:1: unknown key 'pth' in [model] (did you mean 'path'?); known keys: plugin, "
                "path, chat_template, lora, adapters, quantize, context_size, kv_cache_tokens, max_sequences, "
                "batch_tokens, mode"}));

  auto ok = load("[model]\nplugin = \"gguf\"\npath = \"m.gguf\"\n[transport]\nplugin = "
                 "\"test-transport\"\noutput = \"o\"\n");
  ASSERT_TRUE(ok) << ok.error().to_string();
  const PipelineSection* model = ok->find("model");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(std::get<std::string>(model->core_options.values.at("path")), "m.gguf");
  EXPECT_TRUE(model->options.values.empty()) << "the plugin does not see the core's keys";
  EXPECT_TRUE(model->options.specs.empty());
}

TEST_F(PipelineValidation, ModelsListsSeveralNamedModels) {
  const std::string transport = "[transport]\nplugin = \"test-transport\"\noutput = \"o\"\n";
  auto ok = load("[[models]]\nplugin = \"gguf\"\npath = \"a/first.gguf\"\n"
                 "[[models]]\nplugin = \"gguf\"\nname = \"second\"\npath = \"b.gguf\"\ncontext_size = 512\n" +
                 transport);
  ASSERT_TRUE(ok) << ok.error().to_string();
  std::vector<std::string> paths;
  for (const PipelineSection& s : ok->sections) {
    if (s.slot == "models") paths.push_back(std::get<std::string>(s.core_options.values.at("path")));
  }
  EXPECT_EQ(paths, (std::vector<std::string>{"a/first.gguf", "b.gguf"}));

  auto both = load("[model]\nplugin = \"gguf\"\npath = \"m.gguf\"\n[[models]]\nplugin = \"gguf\"\n"
                   "path = \"n.gguf\"\n" + transport);
  ASSERT_FALSE(both);
  EXPECT_EQ(lines(both.error()),
            (std::vector<std::string>{"4:1: the pipeline has both [model] and [[models]]: keep one "
                                      "([[models]] serves several models, the first being the default)"}));

  auto twice = load("[[models]]\nplugin = \"gguf\"\npath = \"x/m.gguf\"\n[[models]]\nplugin = \"gguf\"\n"
                    "path = \"y/m.gguf\"\n" + transport);
  ASSERT_FALSE(twice);
  EXPECT_EQ(lines(twice.error()),
            (std::vector<std::string>{"5:10: two [[models]] are named 'm': give one a different `name`"}));

  auto draft = load("[speculative]\nmode = \"draft\"\ndraft_model = \"d.gguf\"\n"
                    "[[models]]\nplugin = \"gguf\"\npath = \"a.gguf\"\n[[models]]\nplugin = \"gguf\"\n"
                    "path = \"b.gguf\"\n" + transport);
  ASSERT_FALSE(draft);
  ASSERT_EQ(lines(draft.error()).size(), 1u);
  EXPECT_NE(lines(draft.error())[0].find("drafts for one model; [[models]] lists 2"), std::string::npos)
      << lines(draft.error())[0];
}

TEST_F(PipelineValidation, TheEngineTableBoundsKeepAliveAndTheMemoryBudget) {
  const std::string rest = "[transport]\nplugin = \"test-transport\"\noutput = \"o\"\n";
  auto ok = load("[engine]\nkeep_alive_s = -1\nmemory_budget_mb = 4096\n" + rest);
  ASSERT_TRUE(ok) << ok.error().to_string();
  EXPECT_EQ(std::get<std::int64_t>(ok->engine.values.at("keep_alive_s")), -1);
  auto bad = load("[engine]\nkeep_alive_s = -2\n" + rest);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().to_string().find("keep_alive_s"), std::string::npos) << bad.error().to_string();
}

// [speculative] mode = "draft" and draft_model go together; either alone is an error at the
// table.
TEST_F(PipelineValidation, ADraftModelAndTheDraftModeGoTogether) {
  const std::string rest = "[model]\nplugin = \"gguf\"\npath = \"m.gguf\"\n[transport]\nplugin = "
                           "\"test-transport\"\noutput = \"o\"\n";
  auto no_file = load("[speculative]\nmode = \"draft\"\n" + rest);
  ASSERT_FALSE(no_file);
  EXPECT_EQ(lines(no_file.error()),
            (std::vector<std::string>{"1:1: [speculative] mode = \"draft\" needs draft_model = \"FILE.gguf\""}));
  auto no_mode = load("[speculative]\nmode = \"ngram\"\ndraft_model = \"d.gguf\"\n" + rest);
  ASSERT_FALSE(no_mode);
  EXPECT_EQ(lines(no_mode.error()),
            (std::vector<std::string>{"1:1: [speculative] draft_model is read only with mode = \"draft\""}));
  auto ok = load("[speculative]\nmode = \"draft\"\ndraft_model = \"d.gguf\"\nmax_draft = 6\np_min = 0.5\n" + rest);
  ASSERT_TRUE(ok) << ok.error().to_string();
  EXPECT_EQ(std::get<std::string>(ok->speculative.values.at("draft_model")), "d.gguf");
  EXPECT_EQ(std::get<double>(ok->speculative.values.at("p_min")), 0.5);
}

TEST_F(PipelineValidation, AChatTemplateFileMustExistAndParse) {
  const std::string head = "[model]\nplugin = \"gguf\"\npath = \"m.gguf\"\nchat_template = \"";
  const std::string tail = "\"\n[transport]\nplugin = \"test-transport\"\noutput = \"o\"\n";
  const std::string good = (dir / "good.jinja").string();
  test::write_file(good, "{% for m in messages %}{{ m.content }}{% endfor %}");
  auto ok = load(head + good + tail);
  ASSERT_TRUE(ok) << ok.error().to_string();
  EXPECT_EQ(std::get<std::string>(ok->find("model")->core_options.values.at("chat_template")), good);

  auto missing = load(head + (dir / "none.jinja").string() + tail);
  ASSERT_FALSE(missing);
  EXPECT_EQ(lines(missing.error()),
            (std::vector<std::string>{"4:17: cannot read chat template file '" +
                                      (dir / "none.jinja").string() + "'"}));

  const std::string bad = (dir / "bad.jinja").string();
  test::write_file(bad, "{% for m in messages %}{{ m.content }}");
  auto broken = load(head + bad + tail);
  ASSERT_FALSE(broken);
  ASSERT_EQ(broken.error().items().size(), 1u);
  EXPECT_EQ(broken.error().items()[0].message.rfind(bad + ": ", 0), 0u)
      << broken.error().to_string();
}

TEST_F(PipelineValidation, SamplersChainInOrderAndTheLastChooses) {
  const std::string transport = "[transport]\nplugin = \"test-transport\"\noutput = \"o\"\n";
  auto chain = load("[[sampler]]\nplugin = \"top-k\"\nk = 3\n[[sampler]]\nplugin = "
                    "\"temperature\"\n[[sampler]]\nplugin = \"dist\"\n" + transport);
  ASSERT_TRUE(chain) << chain.error().to_string();
  std::vector<std::string> names;
  for (const PipelineSection& s : chain->sections) {
    if (s.slot == "sampler") names.push_back(s.plugin->description().name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"top-k", "temperature", "dist"}));
  EXPECT_EQ(std::get<std::int64_t>(chain->sections[0].options.values.at("k")), 3);

  auto misordered = load("[[sampler]]\nplugin = \"greedy\"\n[[sampler]]\nplugin = \"top-k\"\n" +
                         transport);
  ASSERT_FALSE(misordered);
  EXPECT_EQ(lines(misordered.error()),
            (std::vector<std::string>{
                "2:10: sampler 'greedy' chooses the token, so it must be the last of the chain; "
                "move it to the end",
                "4:10: sampler 'top-k' only filters: end the chain with one that chooses the "
                "token (greedy or dist)"}));

  auto lone_filter = load("[sampler]\nplugin = \"top-p\"\n" + transport);
  ASSERT_FALSE(lone_filter);
  EXPECT_EQ(lines(lone_filter.error()),
            (std::vector<std::string>{"2:10: sampler 'top-p' only filters: end the chain with one "
                                      "that chooses the token (greedy or dist)"}));
}

TEST_F(PipelineValidation, APluginOfTheWrongKindIsRefused) {
  auto pipeline = load("[sampler]\nplugin = \"test-transport\"\n[transport]\nplugin = \"greedy\"\n");
  ASSERT_FALSE(pipeline);
  EXPECT_EQ(lines(pipeline.error()),
            (std::vector<std::string>{
                "2:10: plugin 'test-transport' is a transport plugin, but [sampler] needs a "
                "sampler plugin",
                "4:10: plugin 'greedy' is a sampler plugin, but [transport] needs a transport "
                "plugin"}));
}

TEST_F(PipelineValidation, TheTransportIsRequiredAndPluginMustBeAString) {
  auto pipeline = load("[sampler]\nplugin = 3\n");
  ASSERT_FALSE(pipeline);
  EXPECT_EQ(lines(pipeline.error()),
            (std::vector<std::string>{
                "1:1: the pipeline has no [transport] table; it needs one naming a transport "
                "plugin",
                "2:10: 'sampler.plugin' must be a string naming a plugin"}));
}

TEST_F(PipelineValidation, PluginChecksAcrossOptionsPointAtTheOption) {
  auto pipeline = load("[transport]\nplugin = \"test-transport\"\noutput = \"o\"\nloud = true\n"
                       "count = 20\n");
  ASSERT_FALSE(pipeline);
  EXPECT_EQ(lines(pipeline.error()),
            (std::vector<std::string>{"5:9: [transport] plugin 'test-transport': count: must be "
                                      "at most 10 when loud = true"}));
}

TEST_F(PipelineValidation, OverridesAreValidatedAndNamedInErrors) {
  auto pipeline = load("[transport]\nplugin = \"test-transport\"\noutput = \"o\"\n",
                       {"transport.count=7", "transport.ratio=2", "transport.colour=1"});
  ASSERT_FALSE(pipeline);
  const auto& items = pipeline.error().items();
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].to_string(),
            "--set transport.colour=1: error: unknown key 'colour' in [transport]; known keys: "
            "plugin, output, message, mode, count, ratio, loud, tags, ids");
  EXPECT_EQ(items[1].to_string(),
            "--set transport.ratio=2: error: 'transport.ratio': 2 is out of range [0, 1]");

  auto fixed = load("[transport]\nplugin = \"test-transport\"\noutput = \"o\"\n",
                    {"transport.count=7", "transport.tags=[\"x\", \"y\"]"});
  ASSERT_TRUE(fixed) << fixed.error().to_string();
  const ResolvedOptions& options = fixed->find("transport")->options;
  EXPECT_EQ(std::get<std::int64_t>(options.values.at("count")), 7);
  EXPECT_EQ(std::get<std::vector<std::string>>(options.values.at("tags")).size(), 2u);
}

TEST_F(PipelineValidation, AnOverrideCanNameTheTransportOfAnEmptyFile) {
  auto pipeline = load("", {"transport.plugin=test-transport", "transport.output=o"});
  ASSERT_TRUE(pipeline) << pipeline.error().to_string();
}

// [backend] device = "...": the device picks the plugin; the rest of the table is its options.
TEST_F(PipelineValidation, ABackendDeviceOfCpuPicksTheCpuPlugin) {
  auto pipeline = load(R"([backend]
device = "cpu"
activations = "f32"
[transport]
plugin = "test-transport"
output = "/tmp/x"
)");
  ASSERT_TRUE(pipeline) << pipeline.error().to_string();
  const PipelineSection* backend = pipeline->find("backend");
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->plugin->description().name, "cpu");
  EXPECT_EQ(std::get<std::string>(backend->options.values.at("activations")), "f32");
}

// auto: cuda where a GPU is usable, else cpu; `activations = "f32"` is valid for both, so one
// pipeline runs on either machine.
TEST_F(PipelineValidation, ABackendDeviceOfAutoTakesAUsableBackend) {
  auto pipeline = load(R"([backend]
device = "auto"
activations = "f32"
[transport]
plugin = "test-transport"
output = "/tmp/x"
)");
  ASSERT_TRUE(pipeline) << pipeline.error().to_string();
  const PipelineSection* backend = pipeline->find("backend");
  ASSERT_NE(backend, nullptr);
  const std::string name = backend->plugin->description().name;
  EXPECT_EQ(name, std::filesystem::exists("/dev/nvidiactl") ? name : std::string("cpu"));
  EXPECT_TRUE(name == "cpu" || name == "cuda") << name;
  EXPECT_EQ(std::get<std::string>(backend->options.values.at("activations")), "f32");
}

TEST_F(PipelineValidation, ABackendDeviceIsCheckedWhereItIsWritten) {
  auto both = load(R"([backend]
device = "cpu"
plugin = "cpu"
[transport]
plugin = "test-transport"
output = "/tmp/x"
)");
  ASSERT_FALSE(both);
  EXPECT_NE(both.error().to_string().find("sets both 'plugin' and 'device'"), std::string::npos)
      << both.error().to_string();
  auto bad = load(R"([backend]
device = "tpu"
[transport]
plugin = "test-transport"
output = "/tmp/x"
)");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().to_string().find("2:10: error: 'backend.device' must be cpu, cuda, cuda:N or auto"),
            std::string::npos)
      << bad.error().to_string();
}

// Asking for CUDA where it cannot run (no driver here) is an error at validation, never the CPU.
TEST_F(PipelineValidation, ABackendDeviceOfCudaWithoutAGpuSaysWhy) {
  if (std::filesystem::exists("/dev/nvidiactl")) GTEST_SKIP() << "this machine has an NVIDIA GPU";
  auto pipeline = load(R"([backend]
device = "cuda"
[transport]
plugin = "test-transport"
output = "/tmp/x"
)");
  ASSERT_FALSE(pipeline);
  const std::string text = pipeline.error().to_string();
  EXPECT_NE(text.find("2:10: error: [backend] --device cuda: "), std::string::npos) << text;
  EXPECT_TRUE(text.find("CUDA is not usable") != std::string::npos ||
              text.find("no CUDA backend plugin") != std::string::npos)
      << text;
}

}  // namespace
}  // namespace lpx::core
