#include "hf_tokenizer.hpp"

#include <algorithm>
#include <limits>
#include <tuple>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "json_fields.hpp"

namespace lpx::safetensors {
namespace {

namespace json = boost::json;
using Error = tl::unexpected<std::string>;
using Check = tl::expected<bool, std::string>;

constexpr const char* kFile = "tokenizer.json";
constexpr std::int64_t kMaxTokens = std::int64_t{1} << 24;
constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581 "▁", SentencePiece's space
// What Hugging Face's ByteLevel pre-tokenizer splits with when use_regex is set (GPT-2's regex).
constexpr const char* kByteLevelRegex =
    R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)re";

// tokenizer.ggml.token_type values (llama.cpp's).
enum : std::int64_t { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };

std::string describe(const json::value& v) {
  std::string text = json::serialize(v);
  return text.size() > 120 ? text.substr(0, 120) + "..." : text;
}

bool is_text(const json::value* v, std::string_view text) {
  return v != nullptr && v->is_string() && std::string_view(v->get_string()) == text;
}

std::string_view type_of(const json::value& v) {
  const json::object* o = v.if_object();
  const json::value* type = o != nullptr ? o->if_contains("type") : nullptr;
  return type != nullptr && type->is_string() ? std::string_view(type->get_string()) : std::string_view();
}

// Everything the pre-tokenizer and normalizer say, reduced to what the core can run.
struct Splitting {
  std::vector<std::string> patterns;  // byte-level BPE: regexes, in order
  bool byte_level = false;
  bool space_mark = false;            // spaces become "▁" (SentencePiece style)
  bool space_prefix = false;          // a "▁" is put before the text
};

// The name llama.cpp gives a pre-tokenizer whose regexes are exactly these (as tokenizer.json
// writes them), so that a GGUF converted from the directory reads right in llama.cpp too; LPX
// itself runs the regexes. nullptr when the set has no such name.
const char* known_pre_tokenizer_name(const std::vector<std::string>& patterns) {
  static const std::string kLlama3 =
      R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
  static const std::string kQwen2 =
      R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
  const std::vector<std::string> gpt2 = {kByteLevelRegex};
  const std::vector<std::string> digits_then_gpt2 = {R"(\p{N})", kByteLevelRegex};
  if (patterns == gpt2) return "gpt-2";
  if (patterns == digits_then_gpt2) return "smollm";  // StarCoder and SmolLM: digits one by one
  if (patterns == std::vector<std::string>{kLlama3}) return "llama-bpe";
  if (patterns == std::vector<std::string>{kQwen2}) return "qwen2";
  return nullptr;
}

std::string escape_regex(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

Check read_pre_tokenizer(const json::value& pre, Splitting& s, int depth) {
  if (pre.is_null()) return true;
  if (depth > 8) return Error(std::string(kFile) + ": pre_tokenizer sequences nest too deeply");
  const json::object* o = pre.if_object();
  const std::string_view type = type_of(pre);
  const auto unsupported = [&](const std::string& why) {
    return Error(std::string(kFile) + ": pre_tokenizer " + describe(pre) + ": " + why);
  };
  if (o == nullptr) return unsupported("not an object");
  const JsonFields fields(*o, std::string(kFile) + " pre_tokenizer");
  if (type == "Sequence") {
    const json::value* list = o->if_contains("pretokenizers");
    if (list == nullptr || !list->is_array()) return unsupported("no 'pretokenizers' list");
    for (const json::value& item : list->get_array()) {
      if (auto read = read_pre_tokenizer(item, s, depth + 1); !read) return read;
    }
    return true;
  }
  if (type == "ByteLevel") {
    auto prefix = fields.flag_or("add_prefix_space", true);
    auto regex = fields.flag_or("use_regex", true);
    if (!prefix) return Error(prefix.error());
    if (!regex) return Error(regex.error());
    if (*prefix) return unsupported("add_prefix_space is not supported");
    s.byte_level = true;
    if (*regex) s.patterns.emplace_back(kByteLevelRegex);
    return true;
  }
  if (type == "Digits") {
    auto individual = fields.flag_or("individual_digits", false);
    if (!individual) return Error(individual.error());
    s.patterns.emplace_back(*individual ? R"(\p{N})" : R"(\p{N}+)");
    return true;
  }
  if (type == "Split") {
    const json::value* pattern = o->if_contains("pattern");
    const json::object* p = pattern != nullptr ? pattern->if_object() : nullptr;
    auto behavior = fields.optional_string("behavior");
    auto invert = fields.flag_or("invert", false);
    if (!behavior) return Error(behavior.error());
    if (!invert) return Error(invert.error());
    if (behavior->value_or("") != "Isolated" || *invert) {
      return unsupported("only Split with behavior Isolated (not inverted) is supported");
    }
    if (p != nullptr && p->if_contains("Regex") != nullptr && p->at("Regex").is_string()) {
      s.patterns.emplace_back(p->at("Regex").get_string());
    } else if (p != nullptr && p->if_contains("String") != nullptr && p->at("String").is_string()) {
      s.patterns.push_back(escape_regex(p->at("String").get_string()));
    } else {
      return unsupported("its pattern should be {\"Regex\": ...} or {\"String\": ...}");
    }
    return true;
  }
  if (type == "Metaspace") {
    auto replacement = fields.optional_string("replacement");
    auto scheme = fields.optional_string("prepend_scheme");
    auto prefix = fields.flag_or("add_prefix_space", true);  // before prepend_scheme existed
    auto split = fields.flag_or("split", true);
    for (const auto* read : {&replacement, &scheme}) {
      if (!*read) return Error(read->error());
    }
    if (!prefix) return Error(prefix.error());
    if (!split) return Error(split.error());
    if (replacement->value_or(std::string(kSpaceMark)) != kSpaceMark) return unsupported("replacement is not \"▁\"");
    if (*split) return unsupported("split is not supported (SentencePiece merges across words)");
    s.space_mark = true;
    s.space_prefix = *scheme ? **scheme != "never" : *prefix;
    return true;
  }
  return unsupported("a pre-tokenizer LPX cannot reproduce");
}

Check read_normalizer(const json::value& normalizer, Splitting& s, int depth) {
  if (normalizer.is_null()) return true;
  if (depth > 8) return Error(std::string(kFile) + ": normalizer sequences nest too deeply");
  const std::string_view type = type_of(normalizer);
  const auto unsupported = [&](const std::string& why) {
    return Error(std::string(kFile) + ": normalizer " + describe(normalizer) + ": " + why);
  };
  const json::object* o = normalizer.if_object();
  if (o == nullptr) return unsupported("not an object");
  if (type == "Sequence") {
    const json::value* list = o->if_contains("normalizers");
    if (list == nullptr || !list->is_array()) return unsupported("no 'normalizers' list");
    for (const json::value& item : list->get_array()) {
      if (auto read = read_normalizer(item, s, depth + 1); !read) return read;
    }
    return true;
  }
  // Input is taken as NFC already, as llama.cpp takes it (docs/models.md says so).
  if (type == "NFC") return true;
  if (type == "Prepend") {
    const json::value* prepend = o->if_contains("prepend");
    if (!is_text(prepend, kSpaceMark)) return unsupported("only \"▁\" may be prepended");
    s.space_prefix = true;
    return true;
  }
  if (type == "Replace") {
    const json::value* pattern = o->if_contains("pattern");
    const json::value* content = o->if_contains("content");
    const json::object* p = pattern != nullptr ? pattern->if_object() : nullptr;
    const json::value* text = p != nullptr ? p->if_contains("String") : nullptr;
    if (!is_text(text, " ") || !is_text(content, kSpaceMark)) {
      return unsupported("only the replacement of \" \" by \"▁\" is supported");
    }
    s.space_mark = true;
    return true;
  }
  return unsupported("a normalizer LPX cannot reproduce");
}

struct Vocab {
  std::vector<std::string> tokens;
  std::vector<std::int64_t> types;
  std::unordered_map<std::string, std::int64_t> ids;
};

Check read_vocab(const json::object& model, const json::value* added, Vocab& v) {
  const json::value* vocab = model.if_contains("vocab");
  if (vocab == nullptr || !vocab->is_object()) return Error(std::string(kFile) + ": model has no 'vocab' object");
  std::int64_t n = 0;
  std::vector<std::pair<std::int64_t, std::string>> entries;
  for (const auto& [text, id] : vocab->get_object()) {
    if (!id.is_int64() && !id.is_uint64()) {
      return Error(std::string(kFile) + ": vocab id of " + describe(json::value(text)) + " is " + describe(id));
    }
    const std::int64_t value = id.is_int64() ? id.get_int64() : static_cast<std::int64_t>(std::min<std::uint64_t>(id.get_uint64(), kMaxTokens));
    if (value < 0 || value >= kMaxTokens) {
      return Error(std::string(kFile) + ": vocab id " + std::to_string(value) + " is out of range");
    }
    entries.emplace_back(value, std::string(text));
    n = std::max(n, value + 1);
  }
  std::vector<std::tuple<std::int64_t, std::string, bool>> extra;
  if (added != nullptr && !added->is_null()) {
    if (!added->is_array()) return Error(std::string(kFile) + ": 'added_tokens' should be a list");
    for (const json::value& item : added->get_array()) {
      const json::object* t = item.if_object();
      const json::value* id = t != nullptr ? t->if_contains("id") : nullptr;
      const json::value* content = t != nullptr ? t->if_contains("content") : nullptr;
      const json::value* special = t != nullptr ? t->if_contains("special") : nullptr;
      if (id == nullptr || !(id->is_int64() || id->is_uint64()) || content == nullptr || !content->is_string()) {
        return Error(std::string(kFile) + ": added token " + describe(item) + " lacks an id or content");
      }
      const std::int64_t value = id->is_int64() ? id->get_int64() : static_cast<std::int64_t>(std::min<std::uint64_t>(id->get_uint64(), kMaxTokens));
      if (value < 0 || value >= kMaxTokens) return Error(std::string(kFile) + ": added token id " + describe(*id) + " is out of range");
      extra.emplace_back(value, std::string(content->get_string()), special != nullptr && special->is_bool() && special->get_bool());
      n = std::max(n, value + 1);
    }
  }
  if (n == 0) return Error(std::string(kFile) + ": the vocabulary is empty");
  v.tokens.assign(static_cast<std::size_t>(n), std::string());
  v.types.assign(static_cast<std::size_t>(n), kUnused);
  std::vector<bool> seen(static_cast<std::size_t>(n), false);
  for (auto& [id, text] : entries) {
    const auto i = static_cast<std::size_t>(id);
    if (seen[i]) return Error(std::string(kFile) + ": vocab id " + std::to_string(id) + " is given twice");
    seen[i] = true;
    v.tokens[i] = std::move(text);
    v.types[i] = kNormal;
  }
  for (auto& [id, text, special] : extra) {
    const auto i = static_cast<std::size_t>(id);
    if (seen[i] && v.tokens[i] != text) {
      return Error(std::string(kFile) + ": added token " + std::to_string(id) + " '" + text +
                   "' differs from the vocab's '" + v.tokens[i] + "'");
    }
    seen[i] = true;
    v.tokens[i] = std::move(text);
    v.types[i] = special ? kControl : kUserDefined;
  }
  for (std::size_t i = 0; i < v.tokens.size(); ++i) {
    if (!seen[i]) v.tokens[i] = "[PAD" + std::to_string(i) + "]";  // ids the file skips, as llama.cpp names them
    v.ids.emplace(v.tokens[i], static_cast<std::int64_t>(i));
  }
  return true;
}

tl::expected<std::vector<std::string>, std::string> read_merges(const json::object& model) {
  std::vector<std::string> merges;
  const json::value* list = model.if_contains("merges");
  if (list == nullptr || list->is_null()) return merges;
  if (!list->is_array()) return Error(std::string(kFile) + ": 'merges' should be a list");
  merges.reserve(list->get_array().size());
  for (const json::value& m : list->get_array()) {
    if (m.is_string()) {
      merges.emplace_back(m.get_string());  // "left right"
    } else if (m.is_array() && m.get_array().size() == 2 && m.get_array()[0].is_string() &&
               m.get_array()[1].is_string()) {
      merges.push_back(std::string(m.get_array()[0].get_string()) + " " +
                       std::string(m.get_array()[1].get_string()));
    } else {
      return Error(std::string(kFile) + ": merge " + describe(m) + " is not a pair of tokens");
    }
  }
  return merges;
}

// A special token named in tokenizer_config.json: a string, or an object with "content".
tl::expected<std::optional<std::int64_t>, std::string> config_token(const json::object* tokenizer_config,
                                                                    const char* key, const Vocab& v) {
  if (tokenizer_config == nullptr) return std::optional<std::int64_t>();
  const json::value* value = tokenizer_config->if_contains(key);
  if (value == nullptr || value->is_null()) return std::optional<std::int64_t>();
  const json::value* content = value;
  if (const json::object* o = value->if_object()) content = o->if_contains("content");
  if (content == nullptr || !content->is_string()) {
    return Error(std::string("tokenizer_config.json: '") + key + "' should be a token's text, found " + describe(*value));
  }
  auto it = v.ids.find(std::string(content->get_string()));
  if (it == v.ids.end()) {
    return Error(std::string("tokenizer_config.json: ") + key + " " + describe(*content) + " is not a token");
  }
  return std::optional<std::int64_t>(it->second);
}

// config.json's *_token_id: an id, or a list whose first id counts.
std::optional<std::int64_t> config_id(const json::object* config, const char* key) {
  if (config == nullptr) return std::nullopt;
  const json::value* value = config->if_contains(key);
  if (value != nullptr && value->is_array() && !value->get_array().empty()) value = &value->get_array()[0];
  if (value == nullptr || !value->is_int64() || value->get_int64() < 0) return std::nullopt;
  return value->get_int64();
}

// What the post-processor adds around a single text: whether it starts and ends with a special token.
void template_ends(const json::value& processor, const Vocab& v, std::optional<std::int64_t>& first,
                   std::optional<std::int64_t>& last) {
  const json::object* o = processor.if_object();
  if (o == nullptr) return;
  if (type_of(processor) == "Sequence") {
    if (const json::value* list = o->if_contains("processors"); list != nullptr && list->is_array()) {
      for (const json::value& p : list->get_array()) template_ends(p, v, first, last);
    }
    return;
  }
  if (type_of(processor) != "TemplateProcessing") return;
  const json::value* single = o->if_contains("single");
  if (single == nullptr || !single->is_array() || single->get_array().empty()) return;
  const auto special = [&](const json::value& item) -> std::optional<std::int64_t> {
    const json::object* piece = item.if_object();
    const json::value* token = piece != nullptr ? piece->if_contains("SpecialToken") : nullptr;
    const json::value* id = token != nullptr && token->is_object() ? token->get_object().if_contains("id") : nullptr;
    if (id == nullptr || !id->is_string()) return std::nullopt;
    auto it = v.ids.find(std::string(id->get_string()));
    return it == v.ids.end() ? std::nullopt : std::optional<std::int64_t>(it->second);
  };
  first = special(single->get_array().front());
  last = single->get_array().size() > 1 ? special(single->get_array().back()) : std::nullopt;
}

}  // namespace

tl::expected<bool, std::string> read_hf_tokenizer(const json::object& tokenizer,
                                                  const json::object* tokenizer_config,
                                                  const json::object* config, MetadataTable& out) {
  const json::value* model_value = tokenizer.if_contains("model");
  const json::object* model = model_value != nullptr ? model_value->if_object() : nullptr;
  if (model == nullptr) return Error(std::string(kFile) + ": no 'model' object");
  const std::string_view model_type = type_of(*model_value);
  if (model_type != "BPE" && !(model_type.empty() && model->if_contains("merges") != nullptr)) {
    return Error(std::string(kFile) + ": model type '" + std::string(model_type) +
                 "' is not supported (LPX reads BPE tokenizers)");
  }
  const JsonFields bpe(*model, std::string(kFile) + " model");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    auto text = bpe.optional_string(key);
    if (!text) return Error(text.error());
    if (*text && !(*text)->empty()) return Error(bpe.error(key, "empty (LPX does not support it)"));
  }
  auto byte_fallback = bpe.flag_or("byte_fallback", false);
  auto ignore_merges = bpe.flag_or("ignore_merges", false);
  if (!byte_fallback) return Error(byte_fallback.error());
  if (!ignore_merges) return Error(ignore_merges.error());

  Splitting splitting;
  if (const json::value* pre = tokenizer.if_contains("pre_tokenizer")) {
    if (auto read = read_pre_tokenizer(*pre, splitting, 0); !read) return read;
  }
  if (const json::value* normalizer = tokenizer.if_contains("normalizer")) {
    if (auto read = read_normalizer(*normalizer, splitting, 0); !read) return read;
  }
  const bool byte_level = splitting.byte_level;
  const bool sentencepiece = !byte_level && (*byte_fallback || splitting.space_mark);
  if (!byte_level && !sentencepiece) {
    return Error(std::string(kFile) + ": a BPE tokenizer that is neither byte-level (a ByteLevel "
                 "pre-tokenizer) nor SentencePiece-style (\"▁\" for spaces)");
  }
  if (byte_level && *byte_fallback) return Error(std::string(kFile) + ": byte-level BPE with byte_fallback");

  Vocab v;
  if (auto read = read_vocab(*model, tokenizer.if_contains("added_tokens"), v); !read) return read;
  auto merges = read_merges(*model);
  if (!merges) return Error(merges.error());
  // The embedding may have more rows than the tokenizer has tokens (Qwen: 151,936 rows, ~151,665
  // tokens): the ids past the last token are unused, as llama.cpp's converter pads them.
  if (config != nullptr) {
    auto rows = JsonFields(*config, "config.json").count_or("vocab_size", 0);
    if (!rows) return Error(rows.error());
    if (*rows != 0 && *rows < v.tokens.size()) {
      return Error(std::string(kFile) + ": " + std::to_string(v.tokens.size()) + " tokens, but config.json's "
                   "vocab_size is " + std::to_string(*rows));
    }
    for (std::size_t i = v.tokens.size(); i < *rows; ++i) {
      v.tokens.push_back("[PAD" + std::to_string(i) + "]");
      v.types.push_back(kUnused);
      v.ids.emplace(v.tokens.back(), static_cast<std::int64_t>(i));
    }
  }

  if (byte_level) {
    out.set_string("tokenizer.ggml.model", "gpt2");
    if (splitting.patterns.empty()) splitting.patterns.emplace_back(R"((?s:.+))");  // one word
    if (const char* name = known_pre_tokenizer_name(splitting.patterns)) out.set_string("tokenizer.ggml.pre", name);
    out.set_strings("tokenizer.lpx.pre_patterns", std::move(splitting.patterns));
    out.set_bool("tokenizer.lpx.ignore_merges", *ignore_merges);
  } else {
    out.set_string("tokenizer.ggml.model", "llama");
    out.set_bool("tokenizer.ggml.add_space_prefix", splitting.space_prefix);
    // Scores: the token a merge makes scores minus the merge's rank (its first, best one).
    std::vector<double> scores(v.tokens.size(), -1e9);
    std::string joined;
    for (std::size_t rank = 0; rank < merges->size(); ++rank) {
      const std::string& m = (*merges)[rank];
      const std::size_t space = m.find(' ');
      if (space == std::string::npos) return Error(std::string(kFile) + ": merge '" + m + "' is not a pair");
      joined.assign(m, 0, space);
      joined.append(m, space + 1);
      auto it = v.ids.find(joined);
      if (it == v.ids.end()) return Error(std::string(kFile) + ": merge '" + m + "' makes no token");
      double& score = scores[static_cast<std::size_t>(it->second)];
      score = std::max(score, -static_cast<double>(rank));
    }
    for (std::size_t i = 0; i < v.tokens.size(); ++i) {
      const std::string& t = v.tokens[i];
      if (v.types[i] == kNormal && t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t.back() == '>') {
        v.types[i] = kByte;
      }
      if (v.types[i] != kNormal) scores[i] = 0;
    }
    out.set_floats("tokenizer.ggml.scores", std::move(scores));
  }

  // Special tokens: tokenizer_config.json's texts, else config.json's ids.
  struct Named {
    const char* config_text;
    const char* config_id;
    const char* gguf;
  };
  constexpr Named kNamed[] = {{"bos_token", "bos_token_id", "tokenizer.ggml.bos_token_id"},
                              {"eos_token", "eos_token_id", "tokenizer.ggml.eos_token_id"},
                              {"unk_token", "unk_token_id", "tokenizer.ggml.unknown_token_id"},
                              {"pad_token", "pad_token_id", "tokenizer.ggml.padding_token_id"}};
  std::optional<std::int64_t> bos, eos;
  for (const Named& named : kNamed) {
    auto id = config_token(tokenizer_config, named.config_text, v);
    if (!id) return Error(id.error());
    if (!*id) *id = config_id(config, named.config_id);
    if (*id && **id >= static_cast<std::int64_t>(v.tokens.size())) {
      return Error(std::string("config.json: ") + named.config_id + " " + std::to_string(**id) +
                   " is outside the vocabulary (" + std::to_string(v.tokens.size()) + " tokens)");
    }
    if (!*id) continue;
    out.set_uint(named.gguf, static_cast<std::uint64_t>(**id));
    if (named.config_text == std::string_view("bos_token")) bos = *id;
    if (named.config_text == std::string_view("eos_token")) eos = *id;
    if (named.config_text == std::string_view("unk_token")) v.types[static_cast<std::size_t>(**id)] = kUnknown;
  }

  // Whether encoding adds BOS/EOS: tokenizer_config.json says so, else the post-processor does.
  std::optional<std::int64_t> first, last;
  if (const json::value* processor = tokenizer.if_contains("post_processor")) template_ends(*processor, v, first, last);
  bool add_bos = first.has_value() && first == bos;
  bool add_eos = last.has_value() && last == eos;
  if (tokenizer_config != nullptr) {
    const JsonFields fields(*tokenizer_config, "tokenizer_config.json");
    auto b = fields.flag_or("add_bos_token", add_bos);
    auto e = fields.flag_or("add_eos_token", add_eos);
    if (!b) return Error(b.error());
    if (!e) return Error(e.error());
    add_bos = *b;
    add_eos = *e;
  }
  out.set_bool("tokenizer.ggml.add_bos_token", add_bos);
  out.set_bool("tokenizer.ggml.add_eos_token", add_eos);

  out.set_ints("tokenizer.ggml.token_type", std::move(v.types));
  out.set_strings("tokenizer.ggml.tokens", std::move(v.tokens));
  if (byte_level) out.set_strings("tokenizer.ggml.merges", std::move(*merges));
  return true;
}

}  // namespace lpx::safetensors
