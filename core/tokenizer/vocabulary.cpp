#include "tokenizer/vocabulary.hpp"

#include <cmath>
#include <limits>

#include "tokenizer/pre_tokenizer.hpp"

namespace lpx::core {

const char* tokenizer_model_name(TokenizerModel model) noexcept {
  return model == TokenizerModel::spm ? "llama" : "gpt2";
}

namespace {

struct NamedId {
  const char* key;
  const std::optional<std::int32_t>* id;
};

std::vector<NamedId> named_ids(const SpecialTokenIds& s) {
  return {{"bos_token_id", &s.bos},           {"eos_token_id", &s.eos},
          {"unknown_token_id", &s.unknown},   {"padding_token_id", &s.padding},
          {"seperator_token_id", &s.separator}, {"mask_token_id", &s.mask},
          {"eot_token_id", &s.eot},           {"eom_token_id", &s.eom},
          {"fim_pre_token_id", &s.fim_prefix}, {"fim_suf_token_id", &s.fim_suffix},
          {"fim_mid_token_id", &s.fim_middle}, {"fim_pad_token_id", &s.fim_pad},
          {"fim_rep_token_id", &s.fim_repo},   {"fim_sep_token_id", &s.fim_separator}};
}

}  // namespace

std::optional<std::string> check_vocabulary_shape(const Vocabulary& v) {
  const std::size_t n = v.tokens.size();
  if (n == 0) return "tokenizer.ggml.tokens is empty";
  if (n > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    return "tokenizer.ggml.tokens has " + std::to_string(n) + " tokens, more than ids can number";
  }
  if (!v.scores.empty() && v.scores.size() != n) {
    return "tokenizer.ggml.scores has " + std::to_string(v.scores.size()) +
           " entries but tokenizer.ggml.tokens has " + std::to_string(n);
  }
  if (!v.types.empty() && v.types.size() != n) {
    return "tokenizer.ggml.token_type has " + std::to_string(v.types.size()) +
           " entries but tokenizer.ggml.tokens has " + std::to_string(n);
  }
  for (std::size_t i = 0; i < v.scores.size(); ++i) {
    if (std::isnan(v.scores[i])) return "tokenizer.ggml.scores[" + std::to_string(i) + "] is NaN";
  }
  for (std::size_t i = 0; i < v.types.size(); ++i) {
    const auto type = static_cast<std::int32_t>(v.types[i]);
    if (type < 0 || type > 6) {
      return "tokenizer.ggml.token_type[" + std::to_string(i) + "] = " + std::to_string(type) +
             " is not a token type (0 undefined, 1 normal, 2 unknown, 3 control, 4 user-defined, "
             "5 unused, 6 byte)";
    }
  }
  for (const NamedId& named : named_ids(v.special)) {
    if (!*named.id) continue;
    const std::int32_t id = **named.id;
    if (id < 0 || static_cast<std::size_t>(id) >= n) {
      return std::string("tokenizer.ggml.") + named.key + " = " + std::to_string(id) +
             " is outside the vocabulary (" + std::to_string(n) + " tokens)";
    }
  }
  if (v.add_bos && !v.special.bos) {
    return "tokenizer.ggml.add_bos_token is true but the vocabulary has no BOS token "
           "(tokenizer.ggml.bos_token_id)";
  }
  if (v.add_eos && !v.special.eos) {
    return "tokenizer.ggml.add_eos_token is true but the vocabulary has no EOS token "
           "(tokenizer.ggml.eos_token_id)";
  }
  if (v.model == TokenizerModel::bpe && v.pre_patterns.empty() &&
      detail::find_pre_tokenizer(v.pre) == nullptr) {
    return "unknown pre-tokenizer tokenizer.ggml.pre = '" + v.pre + "' (known: " +
           detail::known_pre_tokenizers() + ")";
  }
  return std::nullopt;
}

}  // namespace lpx::core
