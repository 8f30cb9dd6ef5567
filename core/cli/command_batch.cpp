// `lpx-pipeline batch --model FILE --input FILE.jsonl …` and `batch-merge RUN_DIR…`: the batch
// pipeline (pipelines/batch.toml) written from flags. Batch jobs run the engine in throughput
// mode; everything else is the jsonl transport's (docs/batch.md).
#include <sstream>

#include "cli/commands.hpp"
#include "cli/run_pipeline.hpp"
#include "cli/shorthand_pipeline.hpp"

namespace lpx::cli {

int batch_command(const BatchArguments& a) {
  return run_pipeline(
      [&](core::PluginRegistry& registry) {
        toml::table transport{{"plugin", "jsonl"}, {"input", a.input}, {"resume", a.resume}};
        if (!a.run_dir.empty()) transport.insert("run_dir", a.run_dir);
        if (!a.shard.empty()) transport.insert("shard", a.shard);
        if (a.max_tokens != 0) transport.insert("max_tokens", static_cast<std::int64_t>(a.max_tokens));
        const ShorthandModel model{a.model_path, a.device, a.backend, a.context_size, a.max_sequences, "throughput"};
        return load_shorthand_pipeline("batch", model, std::move(transport), a.overrides, registry);
      },
      false);
}

int batch_merge_command(const BatchMergeArguments& a) {
  return run_pipeline(
      [&](core::PluginRegistry& registry) {
        toml::array dirs;
        for (const std::string& d : a.run_dirs) dirs.push_back(d);
        toml::table transport{{"plugin", "jsonl"}, {"merge", std::move(dirs)}};
        if (!a.output.empty()) transport.insert("run_dir", a.output);
        const toml::table document{
            {"pipeline", toml::table{{"name", "batch-merge"}, {"description", "lpx-pipeline batch-merge"}}},
            {"transport", std::move(transport)}};
        std::ostringstream text;
        text << document;
        return core::load_pipeline_text("lpx-pipeline batch-merge", text.str(), {}, registry);
      },
      false);
}

}  // namespace lpx::cli
