// grammar: keeps only the tokens that continue a text the grammar accepts, and lets generation
// end only where that text is complete. The grammar is GBNF (llama.cpp's format; root rule
// `root`), a JSON Schema or a structural tag (docs/structured-output.md). The work is
// xgrammar's: a grammar is parsed when the link is made (a syntax error or an unsupported schema keyword refuses the
// request), compiled once for the model's vocabulary (bind_vocabulary; the host keeps the link
// for later requests with the same grammar), and each step fills a token bitmask from its
// Earley parser with a precomputed per-position token cache.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <lpx/cpp/plugin.hpp>

#include "compiler_cache.hpp"
#include "json_closing.hpp"
#include "json_schema_keywords.hpp"
#include "structural_tag_schemas.hpp"

namespace {

// One sequence: where it is in the grammar, and the bitmask of the step.
class GrammarState final : public lpx::SamplerState {
 public:
  GrammarState(const xgrammar::CompiledGrammar& grammar, int n_vocab)
      : matcher_(grammar), mask_(static_cast<std::size_t>(xgrammar::GetBitmaskSize(n_vocab))),
        shape_(static_cast<std::int64_t>(mask_.size())) {
    tensor_.data = mask_.data();
    tensor_.device = DLDevice{kDLCPU, 0};
    tensor_.ndim = 1;
    tensor_.dtype = xgrammar::GetBitmaskDLType();
    tensor_.shape = &shape_;
    tensor_.strides = nullptr;
    tensor_.byte_offset = 0;
  }
  xgrammar::GrammarMatcher matcher_;
  std::vector<std::int32_t> mask_;
  std::int64_t shape_;
  DLTensor tensor_{};
  std::optional<std::int32_t> refused_;  // a token accept() was told of that the grammar refused
  lpx::grammar::JsonClosing closing_;     // JSON Schema outputs: how far the text is from closed
  std::uint32_t next_look_ = UINT32_MAX;  // tokens_left at which the next closing look is due
  bool closing_now_ = false;              // the close has begun: steer every step
};

const char* label(const std::string& format) {
  return format == "json_schema" ? "JSON Schema: " : format == "structural_tag" ? "structural tag: " : "grammar: ";
}

// The grammar as xgrammar reads it; throws lpx::Error naming what is wrong.
xgrammar::Grammar parse(const std::string& format, const std::string& text) {
  const std::string why = format == "json_schema"      ? lpx::grammar::unsupported_schema_keywords(text)
                          : format == "structural_tag" ? lpx::grammar::unsupported_structural_tag_schemas(text)
                                                       : std::string();
  if (!why.empty()) throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, label(format) + why);
  try {
    if (format == "json_schema") {
      // One line, ", " and ": " between items (as OpenAI's structured outputs write JSON), and
      // no properties beyond those the schema names unless it allows them: every output
      // validates against the schema.
      return xgrammar::Grammar::FromJSONSchema(text, /*any_whitespace=*/false);
    }
    if (format == "structural_tag") {
      auto grammar = xgrammar::Grammar::FromStructuralTag(text);
      if (auto* made = std::get_if<xgrammar::Grammar>(&grammar)) return std::move(*made);
      const std::string message = std::visit([](const auto& e) { return std::string(e.what()); },
                                             std::get<xgrammar::StructuralTagError>(grammar));
      throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, label(format) + lpx::grammar::without_log_prefix(message));
    }
    return xgrammar::Grammar::FromEBNF(text, "root");
  } catch (const lpx::Error&) {
    throw;
  } catch (const std::exception& e) {
    throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, label(format) + lpx::grammar::without_log_prefix(e.what()));
  }
}

class GrammarSampler final : public lpx::Sampler {
 public:
  explicit GrammarSampler(const lpx::Options& options)
      : grammar_(parse(options.get_string("format"), options.get_string("grammar"))),
        json_(options.get_string("format") == "json_schema") {}

  static void validate(const lpx::Options& options) {
    if (options.get_string("grammar").empty()) {
      throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "grammar: empty");
    }
  }

  void bind_vocabulary(const lpx_vocabulary& vocabulary) override {
    vocabulary_ = lpx::grammar::for_vocabulary(vocabulary);
    try {
      compiled_.emplace(vocabulary_->compiler.CompileGrammar(grammar_));
    } catch (const std::exception& e) {
      throw lpx::Error(LPX_ERR_INVALID_ARGUMENT,
                       std::string("grammar: ") + lpx::grammar::without_log_prefix(e.what()));
    }
  }

  std::unique_ptr<lpx::SamplerState> make_state(std::uint64_t) override {
    if (!compiled_) throw lpx::Error(LPX_ERR_INTERNAL, "grammar: no vocabulary was bound");
    return std::make_unique<GrammarState>(*compiled_, vocabulary_->n_vocab);
  }

  void apply(lpx::SamplerState* base, lpx_candidates& c) override {
    auto& s = static_cast<GrammarState&>(*base);
    if (s.refused_) {
      throw lpx::Error(LPX_ERR_INTERNAL, "grammar: token " + std::to_string(*s.refused_) +
                                             " was taken although the grammar refuses it");
    }
    const auto n_vocab = static_cast<std::uint32_t>(vocabulary_->n_vocab);
    std::size_t kept = 0;
    if (s.matcher_.IsTerminated()) {
      // The output is whole and its end was taken, yet the request goes on (it ignores the
      // end of generation): only end-of-generation tokens can follow a whole text.
      const std::vector<std::int32_t>& ends = vocabulary_->end_of_generation;
      for (std::size_t i = 0; i < c.size; ++i) {
        if (std::find(ends.begin(), ends.end(), c.data[i].id) != ends.end()) c.data[kept++] = c.data[i];
      }
    } else {
      s.matcher_.FillNextTokenBitmask(&s.tensor_);
      for (std::size_t i = 0; i < c.size; ++i) {
        const auto id = static_cast<std::uint32_t>(c.data[i].id);
        const bool allowed = id < n_vocab && ((s.mask_[id / 32] >> (id % 32)) & 1) != 0;
        if (allowed) c.data[kept++] = c.data[i];  // order kept: a sorted list stays sorted
      }
      // Near max_tokens, a JSON text takes the way to its close while that still fits: this
      // token, a greedy close from here, the end of generation, and one token to spare.
      if (json_ && s.closing_now_) {
        kept = keep_closest_to_closed(s, c.data, kept);
      } else if (json_ && c.tokens_left > 0 && c.tokens_left <= std::min(kSteeringWindow, s.next_look_)) {
        const std::uint32_t length = closing_length(s, c.tokens_left);
        if (c.tokens_left <= length + 1) {
          // From here on every step takes the closest way (no more looks: each costs mask
          // fills over the vocabulary).
          s.closing_now_ = true;
          kept = keep_closest_to_closed(s, c.data, kept);
        } else {
          // Half the spare tokens pass before the next look: a close grows by a token or two
          // a step at most, so it still starts in time, and a long answer looks a few times.
          s.next_look_ = c.tokens_left - std::max<std::uint32_t>(1, (c.tokens_left - length - 1) / 2);
        }
      }
    }
    if (kept == 0) {
      throw lpx::Error(LPX_ERR_INVALID_ARGUMENT,
                       "grammar: no token of the vocabulary can continue the output");
    }
    c.size = kept;
    c.has_probabilities = 0;
    c.selected = -1;
  }

  void accept(lpx::SamplerState* base, std::int32_t token) noexcept override {
    auto& s = static_cast<GrammarState&>(*base);
    if (s.matcher_.IsTerminated()) return;  // the end-of-generation token was taken
    if (!s.matcher_.AcceptToken(token)) s.refused_ = token;
    if (json_ && token >= 0 && token < vocabulary_->n_vocab) {
      s.closing_.feed(vocabulary_->pieces[static_cast<std::size_t>(token)]);
    }
  }

  void reset(lpx::SamplerState* base) noexcept override {
    auto& s = static_cast<GrammarState&>(*base);
    s.matcher_.Reset();
    s.refused_.reset();
    s.closing_.reset();
    s.next_look_ = UINT32_MAX;
    s.closing_now_ = false;
  }

 private:
  // How near max_tokens steering starts to look (a look costs a few mask fills).
  static constexpr std::uint32_t kSteeringWindow = 64;

  // The tokens a greedy close takes from where `s` is (each step the allowed token that leaves
  // the JSON closest to closed), the end of generation included; `limit` + 1 when that is more
  // than `limit`. The matcher is left where it was; the step's mask is overwritten.
  std::uint32_t closing_length(GrammarState& s, std::uint32_t limit) const {
    lpx::grammar::JsonClosing closing = s.closing_;
    const auto n_vocab = static_cast<std::uint32_t>(vocabulary_->n_vocab);
    const std::vector<std::int32_t>& ends = vocabulary_->end_of_generation;
    std::uint32_t taken = 0;
    std::uint32_t length = limit + 1;
    while (taken < limit) {
      if (s.matcher_.IsCompleted()) {
        length = taken + 1;
        break;
      }
      s.matcher_.FillNextTokenBitmask(&s.tensor_);
      std::int32_t best = -1;
      std::uint32_t best_distance = UINT32_MAX;
      for (std::uint32_t id = 0; id < n_vocab; ++id) {
        if (((s.mask_[id / 32] >> (id % 32)) & 1) == 0) continue;
        if (std::find(ends.begin(), ends.end(), static_cast<std::int32_t>(id)) != ends.end()) continue;
        const std::uint32_t d = closing.tokens_to_close_after(vocabulary_->pieces[id]);
        if (d < best_distance) {
          best_distance = d;
          best = static_cast<std::int32_t>(id);
        }
      }
      if (best < 0 || !s.matcher_.AcceptToken(best)) break;
      closing.feed(vocabulary_->pieces[static_cast<std::size_t>(best)]);
      ++taken;
    }
    if (taken > 0) s.matcher_.Rollback(static_cast<int>(taken));
    return length;
  }

  // Near max_tokens: of the allowed tokens, only those that leave the JSON closest to closed
  // (an end of generation, where the text is whole, first), in their order. Returns how many.
  std::size_t keep_closest_to_closed(const GrammarState& s, lpx_token_candidate* data, std::size_t n) const {
    const std::vector<std::int32_t>& ends = vocabulary_->end_of_generation;
    const auto distance = [&](std::int32_t id) -> std::int64_t {
      if (std::find(ends.begin(), ends.end(), id) != ends.end()) return -1;
      return s.closing_.tokens_to_close_after(vocabulary_->pieces[static_cast<std::size_t>(id)]);
    };
    std::int64_t best = INT64_MAX;
    for (std::size_t i = 0; i < n; ++i) best = std::min(best, distance(data[i].id));
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (distance(data[i].id) == best) data[kept++] = data[i];
    }
    return kept;
  }

  xgrammar::Grammar grammar_;
  bool json_;  // a JSON Schema: steered to close near max_tokens
  std::shared_ptr<lpx::grammar::VocabularyCompiler> vocabulary_;
  std::optional<xgrammar::CompiledGrammar> compiled_;
};

constexpr lpx_option_spec kOptions[] = {
    lpx::required(lpx::option("grammar", LPX_OPTION_STRING, nullptr,
                              "The grammar (GBNF, root rule `root`), JSON Schema or structural tag, as text")),
    lpx::one_of(lpx::option("format", LPX_OPTION_STRING, "\"gbnf\"",
                            "What `grammar` holds: gbnf, json_schema or structural_tag"),
                "gbnf|json_schema|structural_tag"),
};
constexpr const char* kCapabilities[] = {"sampler:filters", "sampler:grammar"};

}  // namespace

LPX_PLUGIN_ENTRY() {
  return lpx::describe<GrammarSampler>(
      {.name = "grammar",
       .version = "1.1.0",
       .license = "Apache-2.0",
       .description = "Keep only tokens that continue a text a GBNF grammar, JSON Schema or structural tag accepts",
       .options = kOptions,
       .capabilities = kCapabilities});
}
