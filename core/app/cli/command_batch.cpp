// `lpx-pipeline batch --model FILE --input FILE.jsonl …` and `batch-merge RUN_DIR…`: the batch
// pipeline (pipelines/batch.toml) written from flags. Batch jobs run the engine in throughput
// mode; everything else is the jsonl transport's (docs/batch.md).
#include <sstream>

#include "cli/commands.hpp"
#include "cli/engine_flags.hpp"
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
        const ShorthandModel model{a.model_path,    a.device,     a.backend,    a.context_size,
                                   a.max_sequences, "throughput", a.speculative, {}, a.quantize, a.loras,
                                   a.adapters};
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

Command add_batch_command(CLI::App& parent) {
  auto batch = std::make_shared<BatchArguments>();
  CLI::App* batch_app =
      parent.add_subcommand("batch", "Run every prompt of a JSONL file; resumable, exactly once");
  batch_app->add_option("--model", batch->model_path, "Model: a GGUF file or a Hugging Face directory")->required();
  batch_app->add_option("--input", batch->input, "JSONL input: one request per line")->required();
  batch_app->add_option("--run-dir", batch->run_dir,
                        "Output directory (default outputs/<time>-<input hash>/)");
  batch_app->add_flag("--resume", batch->resume, "Finish the run in --run-dir");
  batch_app->add_option("--shard", batch->shard, "I/N: this machine's share of the input (0-based)");
  add_engine_flags(*batch_app, *batch);
  batch_app->add_option("--max-tokens", batch->max_tokens,
                        "max_tokens of lines that set none (0 = until the model stops)")
      ->capture_default_str();
  batch_app->add_option("--set", batch->overrides, "Override a pipeline value: KEY.PATH=VALUE")
      ->allow_extra_args(false);
  return {batch_app, [batch] {
    return batch_command(*batch);
  }};
}

Command add_batch_merge_command(CLI::App& parent) {
  auto merge = std::make_shared<BatchMergeArguments>();
  CLI::App* merge_app = parent.add_subcommand(
      "batch-merge", "Combine the run directories of a sharded batch job; list missing ids");
  merge_app->add_option("run_dirs", merge->run_dirs, "Run directories (one per shard)")->required();
  merge_app->add_option("--output", merge->output,
                        "Merged run directory (default outputs/merged-<time>-<input hash>/)");
  return {merge_app, [merge] {
    return batch_merge_command(*merge);
  }};
}

}  // namespace lpx::cli
