// load_vocabulary: the "tokenizer.ggml.*" metadata of a model file into a Vocabulary.
#include <limits>

#include "model/model_file.hpp"
#include "tokenizer/pre_tokenizer.hpp"
#include "tokenizer/vocabulary.hpp"

namespace lpx::core {
namespace {

constexpr const char* kPrefix = "tokenizer.ggml.";

std::string key(const char* name) { return std::string(kPrefix) + name; }

// An array under `name` whose elements have one of the `accepted` types; its length.
Expected<std::uint64_t> array_of(const ModelFile& file, const std::string& name,
                                 std::initializer_list<std::int32_t> accepted, const char* what) {
  auto array = file.get_array(name);
  if (!array) return unexpected(array.error());
  for (const std::int32_t type : accepted) {
    if (array->element_type == type) return array->length;
  }
  return invalid_argument("metadata '" + name + "' should be an array of " + what + ", found an array of " +
                    metadata_type_name(array->element_type));
}

Expected<std::vector<std::string>> read_strings(const ModelFile& file, const std::string& name) {
  auto length = array_of(file, name, {LPX_VALUE_STRING}, "strings");
  if (!length) return unexpected(length.error());
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(*length));
  for (std::uint64_t i = 0; i < *length; ++i) {
    auto element = file.array_element(name, i);
    if (!element) return unexpected(element.error());
    out.emplace_back(element->string, static_cast<std::size_t>(element->length));
  }
  return out;
}

// Reads an optional bool key into `flag`, leaving it alone when absent.
Expected<bool> read_flag(const ModelFile& file, const char* name, bool& flag) {
  const std::string full = key(name);
  if (!file.has(full)) return false;
  auto value = file.get_bool(full);
  if (!value) return unexpected(value.error());
  flag = *value;
  return true;
}

Expected<bool> read_id(const ModelFile& file, const char* name, std::size_t n_tokens,
                       std::optional<std::int32_t>& id) {
  const std::string full = key(name);
  if (!file.has(full)) return false;
  auto value = file.get_uint(full);
  if (!value) return unexpected(value.error());
  if (*value >= n_tokens) {
    return invalid_argument("metadata '" + full + "' = " + std::to_string(*value) +
                      " is outside the vocabulary (" + std::to_string(n_tokens) + " tokens)");
  }
  id = static_cast<std::int32_t>(*value);
  return true;
}

Expected<Vocabulary> load(const ModelFile& file) {
  Vocabulary v;
  auto model = file.get_string(key("model"));
  if (!model) return unexpected(model.error());
  if (*model == "llama") {
    v.model = TokenizerModel::spm;
  } else if (*model == "gpt2") {
    v.model = TokenizerModel::bpe;
  } else {
    return unsupported("tokenizer.ggml.model '" + *model +
                      "' is not supported (supported: llama = SentencePiece-style BPE, gpt2 = "
                      "byte-level BPE)");
  }
  if (file.has(key("pre"))) {
    auto pre = file.get_string(key("pre"));
    if (!pre) return unexpected(pre.error());
    v.pre = *pre;
  }
  if (auto name = file.get_string("general.name")) v.model_name = *name;
  if (file.has("tokenizer.lpx.pre_patterns")) {
    auto patterns = read_strings(file, "tokenizer.lpx.pre_patterns");
    if (!patterns) return unexpected(patterns.error());
    if (patterns->empty()) return invalid_argument("tokenizer.lpx.pre_patterns is empty");
    v.pre_patterns = std::move(*patterns);
    if (file.has("tokenizer.lpx.ignore_merges")) {
      auto ignore = file.get_bool("tokenizer.lpx.ignore_merges");
      if (!ignore) return unexpected(ignore.error());
      v.ignore_merges = *ignore;
    }
  }

  auto tokens = read_strings(file, key("tokens"));
  if (!tokens) return unexpected(tokens.error());
  v.tokens = std::move(*tokens);
  const std::size_t n = v.tokens.size();

  if (file.has(key("scores"))) {
    auto length = array_of(file, key("scores"), {LPX_VALUE_FLOAT, LPX_VALUE_INT, LPX_VALUE_UINT},
                           "numbers");
    if (!length) return unexpected(length.error());
    v.scores.reserve(static_cast<std::size_t>(*length));
    for (std::uint64_t i = 0; i < *length; ++i) {
      auto element = file.array_element(key("scores"), i);
      if (!element) return unexpected(element.error());
      const double score = element->type == LPX_VALUE_FLOAT ? element->f
                           : element->type == LPX_VALUE_INT ? static_cast<double>(element->i)
                                                            : static_cast<double>(element->u);
      v.scores.push_back(static_cast<float>(score));
    }
  }
  if (file.has(key("token_type"))) {
    auto length = array_of(file, key("token_type"), {LPX_VALUE_INT, LPX_VALUE_UINT}, "integers");
    if (!length) return unexpected(length.error());
    v.types.reserve(static_cast<std::size_t>(*length));
    for (std::uint64_t i = 0; i < *length; ++i) {
      auto element = file.array_element(key("token_type"), i);
      if (!element) return unexpected(element.error());
      const std::int64_t type = element->type == LPX_VALUE_INT ? element->i
                                                               : static_cast<std::int64_t>(element->u);
      if (type < 0 || type > std::numeric_limits<std::int32_t>::max()) {
        return invalid_argument("tokenizer.ggml.token_type[" + std::to_string(i) + "] = " +
                          std::to_string(type) + " is not a token type");
      }
      v.types.push_back(static_cast<TokenType>(type));
    }
  }
  if (v.model == TokenizerModel::bpe) {
    auto merges = read_strings(file, key("merges"));
    if (!merges) return unexpected(merges.error());
    v.merges = std::move(*merges);
  }

  // Defaults by model and pre-tokenizer, then what the file says.
  if (v.model == TokenizerModel::spm) {
    v.add_bos = true;
    v.add_space_prefix = true;
    if (n > 1) v.special.bos = 1;
    if (n > 2) v.special.eos = 2;
    v.special.unknown = 0;
  } else if (v.pre_patterns.empty()) {
    const detail::PreTokenizerSpec* spec = detail::find_pre_tokenizer(v.pre);
    if (spec == nullptr) {
      return unsupported("unknown pre-tokenizer tokenizer.ggml.pre = '" + v.pre + "' (known: " +
                        detail::known_pre_tokenizers() + ")");
    }
    v.add_bos = spec->add_bos;
  }
  for (const auto& [name, flag] : {std::pair<const char*, bool*>{"add_bos_token", &v.add_bos},
                                   {"add_eos_token", &v.add_eos},
                                   {"add_space_prefix", &v.add_space_prefix}}) {
    auto read = read_flag(file, name, *flag);
    if (!read) return unexpected(read.error());
  }
  SpecialTokenIds& s = v.special;
  const std::pair<const char*, std::optional<std::int32_t>*> ids[] = {
      {"bos_token_id", &s.bos},           {"eos_token_id", &s.eos},
      {"unknown_token_id", &s.unknown},   {"padding_token_id", &s.padding},
      {"seperator_token_id", &s.separator}, {"mask_token_id", &s.mask},
      {"eot_token_id", &s.eot},           {"eom_token_id", &s.eom},
      {"fim_pre_token_id", &s.fim_prefix}, {"fim_suf_token_id", &s.fim_suffix},
      {"fim_mid_token_id", &s.fim_middle}, {"fim_pad_token_id", &s.fim_pad},
      {"fim_rep_token_id", &s.fim_repo},   {"fim_sep_token_id", &s.fim_separator},
      // older spellings of the fill-in-the-middle ids
      {"prefix_token_id", &s.fim_prefix}, {"suffix_token_id", &s.fim_suffix},
      {"middle_token_id", &s.fim_middle}};
  for (const auto& [name, id] : ids) {
    auto read = read_id(file, name, n, *id);
    if (!read) return unexpected(read.error());
  }
  if (auto problem = check_vocabulary_shape(v)) return invalid_argument(*problem);
  return v;
}

}  // namespace

Expected<Vocabulary> load_vocabulary(const ModelFile& file) {
  auto vocabulary = load(file);
  if (!vocabulary) return unexpected(vocabulary.error().with_context(file.path()));
  return vocabulary;
}

}  // namespace lpx::core
