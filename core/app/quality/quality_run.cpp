#include "quality/quality_run.hpp"

#include <algorithm>

#include <boost/json.hpp>

#include "engine/engine_builder.hpp"
#include "eval/token_scores.hpp"
#include "eval/window_logits.hpp"
#include "model/builtin_chat_templates.hpp"
#include "quality/quality_prompts.hpp"
#include "tokenizer/tokenizer.hpp"
#include "tokenizer/vocabulary.hpp"

namespace lpx::core::quality {
namespace {

constexpr double kSampledTemperature = 0.8;

// One submitted request and what came back.
struct Pending {
  Answer answer;
  std::string error;
  std::uint64_t id = 0;
};

// The texts of the vocabulary's control tokens: what must never appear in an answer's text.
Expected<std::vector<std::string>> control_token_texts(const ModelFile& file) {
  auto vocabulary = load_vocabulary(file);
  if (!vocabulary) return unexpected(vocabulary.error());
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < vocabulary->tokens.size(); ++i) {
    if (i < vocabulary->types.size() && vocabulary->types[i] == TokenType::control && !vocabulary->tokens[i].empty()) {
      texts.push_back(vocabulary->tokens[i]);
    }
  }
  return texts;
}

}  // namespace

Expected<QualityReport> run_quality(const std::string& model_path, const QualityConfig& config,
                                    PluginRegistry& registry) {
  auto file = ModelFile::open(model_path, registry);
  if (!file) return unexpected(file.error());
  auto specials = control_token_texts(**file);
  if (!specials) return unexpected(specials.error());
  QualityReport report;
  report.model = model_path;
  const auto arch = file.value()->get_string("general.architecture");
  report.chat_template = file.value()->has("tokenizer.chat_template") ||
                         (arch && builtin_chat_template(*arch).has_value());

  EngineInputs inputs;
  inputs.file = std::move(*file);
  auto backend = default_instance(registry, config.backend.plugin, config.backend.options);
  if (!backend) return unexpected(backend.error().prefixed("backend '" + config.backend.plugin + "': "));
  inputs.backend = backend->instance;
  // llama.cpp's default chain (as `generate`): sampled runs draw with it, greedy runs set T = 0.
  for (const char* name : {"top-k", "top-p", "min-p", "temperature", "dist"}) {
    auto link = default_instance(registry, name);
    if (!link) return unexpected(link.error().prefixed(std::string("sampler '") + name + "': "));
    inputs.sampler_chain.push_back(std::move(*link));
  }
  inputs.config.context_size = config.context;
  inputs.config.max_sequences = 8;
  const auto& prompts = quality_prompts();
  const std::size_t per_prompt = 2 * static_cast<std::size_t>(config.runs);
  // Declared before the engine, so that they outlive it: an engine destroyed with requests in
  // flight still calls their on_done.
  std::vector<Pending> pending(prompts.size() * per_prompt);  // never resized: callbacks point in
  std::vector<std::string> messages(prompts.size()), texts(prompts.size());
  auto engine = build_engine(std::move(inputs), registry);
  if (!engine) return unexpected(engine.error());

  for (std::size_t p = 0; p < prompts.size(); ++p) {
    texts[p] = std::string(prompts[p].text);
    messages[p] = boost::json::serialize(boost::json::array{
        boost::json::object{{"role", "user"}, {"content", std::string(prompts[p].text)}}});
    for (std::size_t r = 0; r < per_prompt; ++r) {
      Pending& slot = pending[p * per_prompt + r];
      const bool greedy = r < config.runs;
      lpx_sampling_overrides sampling{};
      sampling.struct_size = sizeof(sampling);
      sampling.set = LPX_SET_TEMPERATURE | LPX_SET_SEED;
      sampling.temperature = greedy ? 0.0 : kSampledTemperature;
      sampling.seed = greedy ? 0 : r - config.runs + 1;
      lpx_request request{};
      request.struct_size = sizeof(request);
      if (report.chat_template) {
        request.messages_json = messages[p].c_str();
      } else {
        request.prompt = texts[p].c_str();
      }
      request.max_tokens = config.max_tokens;
      request.sampling = &sampling;
      request.user = &slot;
      request.on_token = [](void* user, const lpx_token_event* event) -> std::int32_t {
        auto& s = *static_cast<Pending*>(user);
        if (event->token >= 0) s.answer.tokens.push_back(event->token);
        s.answer.text.append(event->text, event->text_length);
        return 0;
      };
      request.on_done = [](void* user, const lpx_request_result* result) {
        auto& s = *static_cast<Pending*>(user);
        s.answer.ended_by_model = result->finish_reason == LPX_FINISH_EOG;
        // The end-of-generation token ends the answer; it is not part of it.
        if (s.answer.ended_by_model && !s.answer.tokens.empty()) s.answer.tokens.pop_back();
        if (result->error != nullptr) s.error = result->error->message;
      };
      auto id = (*engine)->submit(request);
      if (!id) return unexpected(id.error().with_context("prompt '" + texts[p] + "'"));
      slot.id = *id;
    }
  }
  for (Pending& slot : pending) (*engine)->wait(slot.id);

  for (std::size_t p = 0; p < prompts.size(); ++p) {
    PromptResult result;
    result.language = prompts[p].language;
    result.prompt = prompts[p].text;
    for (std::size_t r = 0; r < per_prompt; ++r) {
      Pending& slot = pending[p * per_prompt + r];
      if (!slot.error.empty()) {
        return invalid_argument("prompt '" + result.prompt + "': " + slot.error);
      }
      const bool greedy = r < config.runs;
      const AnswerFaults faults = check_answer(slot.answer, *specials);
      QualityCounts& c = report.counts;
      ++c.runs;
      c.empty += faults.empty;
      c.bad_utf8 += faults.bad_utf8;
      c.special_leaks += faults.special_leak;
      c.early_stops += faults.early_stop;
      c.loops += faults.loop;
      (greedy ? result.greedy : result.sampled).push_back(std::move(slot.answer));
      (greedy ? result.greedy_faults : result.sampled_faults).push_back(faults);
    }
    result.nondeterministic = std::any_of(result.greedy.begin(), result.greedy.end(), [&](const Answer& a) {
      return a.tokens != result.greedy.front().tokens;
    });
    report.counts.nondeterministic += result.nondeterministic;
    report.prompts.push_back(std::move(result));
  }
  return report;
}

Drift greedy_drift(const QualityReport& base, const QualityReport& other) {
  Drift d;
  const std::size_t n = std::min(base.prompts.size(), other.prompts.size());
  double prefix = 0, length = 0;
  for (std::size_t p = 0; p < n; ++p) {
    if (base.prompts[p].greedy.empty() || other.prompts[p].greedy.empty()) continue;
    const Answer& a = base.prompts[p].greedy.front();
    const Answer& b = other.prompts[p].greedy.front();
    const auto mismatch = std::mismatch(a.tokens.begin(), a.tokens.end(), b.tokens.begin(), b.tokens.end());
    ++d.prompts;
    d.identical += a.tokens == b.tokens;
    prefix += static_cast<double>(mismatch.first - a.tokens.begin());
    length += static_cast<double>(a.tokens.size());
  }
  if (d.prompts != 0) {
    d.mean_common_prefix = prefix / static_cast<double>(d.prompts);
    d.mean_base_tokens = length / static_cast<double>(d.prompts);
  }
  return d;
}

Expected<Divergence> answer_divergence(const QualityReport& base, const std::string& other_path,
                                       const QualityConfig& config, PluginRegistry& registry) {
  auto base_file = ModelFile::open(base.model, registry);
  if (!base_file) return unexpected(base_file.error());
  auto other_file = ModelFile::open(other_path, registry);
  if (!other_file) return unexpected(other_file.error());
  auto base_vocabulary = load_vocabulary(**base_file);
  if (!base_vocabulary) return unexpected(base_vocabulary.error());
  auto other_vocabulary = load_vocabulary(**other_file);
  if (!other_vocabulary) return unexpected(other_vocabulary.error());
  if (base_vocabulary->tokens != other_vocabulary->tokens) {
    return invalid_argument(other_path + ": its vocabulary differs from " + base.model +
                            "'s, so their distributions cannot be compared token by token");
  }
  auto tokenizer = Tokenizer::create(std::move(*base_vocabulary));
  if (!tokenizer) return unexpected(tokenizer.error().with_context(base.model));

  // Every base answer as one window (cut to the context), scored from its second token on.
  std::vector<std::vector<std::int32_t>> windows;
  for (const PromptResult& p : base.prompts) {
    if (p.greedy.empty()) continue;
    auto tokens = tokenizer.value()->encode(p.greedy.front().text, Tokenizer::EncodeOptions{true, false, false});
    if (!tokens) return unexpected(tokens.error());
    if (tokens->size() > config.context) tokens->resize(config.context);
    if (tokens->size() >= 2) windows.push_back(std::move(*tokens));
  }
  std::size_t window = 2;
  for (const auto& w : windows) window = std::max(window, w.size());

  const auto runner = [&](const ModelFile& file) -> Expected<std::unique_ptr<eval::WindowLogits>> {
    auto instance = default_instance(registry, config.backend.plugin, config.backend.options);
    if (!instance) return unexpected(instance.error());
    return eval::WindowLogits::create(file, instance->instance, static_cast<std::uint32_t>(window));
  };
  auto base_run = runner(**base_file);
  if (!base_run) return unexpected(base_run.error());
  auto other_run = runner(**other_file);
  if (!other_run) return unexpected(other_run.error());
  if ((*base_run)->n_vocab() != (*other_run)->n_vocab()) {
    return invalid_argument(other_path + ": its output has " + std::to_string((*other_run)->n_vocab()) +
                            " logits, " + base.model + "'s " + std::to_string((*base_run)->n_vocab()));
  }
  const std::size_t vocab = (*base_run)->n_vocab();
  std::vector<float> base_logits, other_logits;
  eval::ScoreTotals totals;
  for (const auto& tokens : windows) {
    base_logits.resize(tokens.size() * vocab);
    other_logits.resize(tokens.size() * vocab);
    if (auto ran = (*base_run)->run(tokens, 0, base_logits.data()); !ran) return unexpected(ran.error());
    if (auto ran = (*other_run)->run(tokens, 0, other_logits.data()); !ran) return unexpected(ran.error());
    for (std::size_t pos = 0; pos + 1 < tokens.size(); ++pos) {
      // score_position(eval, reference): the other model is evaluated against the base.
      totals.add(eval::score_position(std::span<const float>(other_logits.data() + pos * vocab, vocab),
                                      std::span<const float>(base_logits.data() + pos * vocab, vocab),
                                      tokens[pos + 1]));
    }
  }
  Divergence d;
  d.positions = totals.count();
  if (d.positions != 0) {
    d.mean_kl = totals.mean_kl();
    d.kl_error = totals.kl_error();
    d.top1_agreement = totals.top1_agreement();
    d.base_perplexity = totals.reference_perplexity();
    d.other_perplexity = totals.perplexity();
  }
  return d;
}

}  // namespace lpx::core::quality
