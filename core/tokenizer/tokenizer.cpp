#include "tokenizer/tokenizer.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>

#include "tokenizer/bpe_encoder.hpp"
#include "tokenizer/byte_level.hpp"
#include "tokenizer/special_tokens.hpp"
#include "tokenizer/spm_encoder.hpp"
#include "tokenizer/tokenizer_tables.hpp"

namespace lpx::core {

using detail::TokenizerTables;

namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// A token's text for an error message: printable ASCII as is, other bytes as \xNN, cut at 48.
std::string quoted(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < 48; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (text.size() > 48) out += "...";
  return out + "'";
}

std::uint16_t attr_of(const Vocabulary& v, std::size_t id) {
  const TokenType type = v.types.empty() ? TokenType::normal : v.types[id];
  switch (type) {
    case TokenType::normal: return detail::kAttrNormal;
    case TokenType::unknown: return detail::kAttrUnknown;
    case TokenType::control: return detail::kAttrControl;
    case TokenType::user_defined: return detail::kAttrUserDefined;
    case TokenType::unused: return detail::kAttrUnused;
    case TokenType::byte: return detail::kAttrByte;
    case TokenType::undefined: break;
  }
  return 0;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The byte of a "<0xNN>" token, or -1.
int byte_token_value(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return -1;
  const int high = hex_value(text[3]);
  const int low = hex_value(text[4]);
  return high < 0 || low < 0 ? -1 : high * 16 + low;
}

// Token texts llama.cpp uses to recognise special tokens that the metadata does not name. The
// first list entry present wins; every token found this way is treated as a control token.
constexpr std::string_view kEotTexts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
    "<EOT>", "_<EOT>", "[EOT]", "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
    "<end_of_utterance>"};
constexpr std::string_view kEomTexts[] = {"<|eom_id|>"};
constexpr std::string_view kFimPrefixTexts[] = {
    "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>",
    "<PRE>", "\xE2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>"};
constexpr std::string_view kFimSuffixTexts[] = {
    "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81hole\xEF\xBD\x9C>",
    "<SUF>", "\xE2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>"};
constexpr std::string_view kFimMiddleTexts[] = {
    "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>",
    "<MID>", "\xE2\x96\x81<MID>", "<|code_middle|>", "<|middle|>"};
constexpr std::string_view kFimPadTexts[] = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"};
constexpr std::string_view kFimRepoTexts[] = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>",
                                              "<reponame>"};
constexpr std::string_view kFimSeparatorTexts[] = {"<|file_sep|>"};
// Tokens that end generation whatever the metadata says.
constexpr std::string_view kEndOfGenerationTexts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>",
    "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>",
    "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>"};

// Fills `id` (when the metadata left it empty) with the first text of `texts` in the vocabulary,
// and marks that token as control.
template <std::size_t N>
void detect(TokenizerTables& t, std::optional<std::int32_t>& id, const std::string_view (&texts)[N]) {
  if (id) return;
  for (std::string_view text : texts) {
    if (const auto found = t.find(text)) {
      id = *found;
      t.attrs[static_cast<std::size_t>(*found)] |= detail::kAttrControl;
      return;
    }
  }
}

std::string render_piece(const TokenizerTables& t, std::size_t id) {
  const std::uint16_t attr = t.attrs[id];
  const std::string& text = t.vocabulary.tokens[id];
  if (attr & (detail::kAttrControl | detail::kAttrUnknown | detail::kAttrUserDefined)) return text;
  if (attr & detail::kAttrNormal) {
    std::string out;
    if (t.vocabulary.model == TokenizerModel::bpe) {
      detail::ByteLevel::instance().decode(text, out);
      return out;
    }
    out.reserve(text.size());
    for (std::size_t at = 0; at < text.size();) {
      if (text.compare(at, kSpaceMark.size(), kSpaceMark) == 0) {
        out += ' ';
        at += kSpaceMark.size();
      } else {
        out += text[at++];
      }
    }
    return out;
  }
  if (attr & detail::kAttrByte) return std::string(1, static_cast<char>(byte_token_value(text)));
  return {};  // unused and undefined tokens render as nothing
}

Expected<bool> build_tokens(TokenizerTables& t) {
  const Vocabulary& v = t.vocabulary;
  const std::size_t n = v.tokens.size();
  t.size = static_cast<std::int32_t>(n);
  t.attrs.resize(n);
  t.ids.reserve(n);
  for (std::size_t id = 0; id < n; ++id) {
    t.attrs[id] = attr_of(v, id);
    const std::string& text = v.tokens[id];
    if ((t.attrs[id] & detail::kAttrByte) && byte_token_value(text) < 0) {
      return invalid_argument("token " + std::to_string(id) + " " + quoted(text) +
                        " has type byte but is not of the form <0xNN>");
    }
    if (text.empty()) continue;  // never matched; decodes to nothing
    const auto [it, inserted] = t.ids.try_emplace(text, static_cast<std::int32_t>(id));
    if (!inserted) {
      return invalid_argument("tokens " + std::to_string(it->second) + " and " + std::to_string(id) +
                        " have the same text " + quoted(text));
    }
  }
  return true;
}

void build_special(TokenizerTables& t) {
  SpecialTokenIds s = t.vocabulary.special;
  detect(t, s.eot, kEotTexts);
  detect(t, s.eom, kEomTexts);
  detect(t, s.fim_prefix, kFimPrefixTexts);
  detect(t, s.fim_suffix, kFimSuffixTexts);
  detect(t, s.fim_middle, kFimMiddleTexts);
  detect(t, s.fim_pad, kFimPadTexts);
  detect(t, s.fim_repo, kFimRepoTexts);
  detect(t, s.fim_separator, kFimSeparatorTexts);
  t.eot = s.eot;
  t.eom = s.eom;
  t.end_of_generation.assign(static_cast<std::size_t>(t.size), false);
  for (std::string_view text : kEndOfGenerationTexts) {
    if (const auto id = t.find(text)) {
      t.end_of_generation[static_cast<std::size_t>(*id)] = true;
      t.attrs[static_cast<std::size_t>(*id)] |= detail::kAttrControl;
    }
  }
  for (const auto& id : {s.eos, s.eot, s.eom, s.fim_pad, s.fim_repo, s.fim_separator}) {
    if (id) t.end_of_generation[static_cast<std::size_t>(*id)] = true;
  }

  constexpr std::uint16_t kSpecial =
      detail::kAttrControl | detail::kAttrUserDefined | detail::kAttrUnknown;
  for (std::int32_t id = 0; id < t.size; ++id) {
    const auto i = static_cast<std::size_t>(id);
    if ((t.attrs[i] & kSpecial) && !t.vocabulary.tokens[i].empty()) t.special_tokens.push_back(id);
  }
  std::sort(t.special_tokens.begin(), t.special_tokens.end(), [&](std::int32_t a, std::int32_t b) {
    const std::size_t la = t.vocabulary.tokens[static_cast<std::size_t>(a)].size();
    const std::size_t lb = t.vocabulary.tokens[static_cast<std::size_t>(b)].size();
    return la != lb ? la > lb : a < b;
  });

  // llama.cpp's one per-model rule: Phi-3's special tokens swallow the whitespace after them.
  // (Attributes only: the special-token indexes are built after this.)
  std::string name = t.vocabulary.model_name;
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
    for (const std::int32_t id : t.special_tokens) t.attrs[static_cast<std::size_t>(id)] |= detail::kAttrRstrip;
    if (const auto id = t.find("</s>")) t.attrs[static_cast<std::size_t>(*id)] |= detail::kAttrRstrip;
    for (std::string_view text : {"<unk>", "<s>", "<|endoftext|>"}) {
      if (const auto id = t.find(text)) {
        t.attrs[static_cast<std::size_t>(*id)] &= static_cast<std::uint16_t>(~detail::kAttrRstrip);
      }
    }
  }
}

void build_spm(TokenizerTables& t) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  t.space_prefix = t.vocabulary.add_space_prefix;
  for (const std::string& token : t.vocabulary.tokens) {
    for (std::size_t at = token.find(kSpaceMark, 1); at != std::string::npos;
         at = token.find(kSpaceMark, at + 1)) {
      for (std::size_t length = 1; length <= 4 && length <= at; ++length) {
        t.joins_space_mark.emplace(token.substr(at - length, length));
      }
    }
  }
  for (std::int32_t id = 0; id < t.size; ++id) {
    const std::string& token = t.vocabulary.tokens[static_cast<std::size_t>(id)];
    for (std::size_t cut = 1; cut < token.size(); ++cut) {
      const auto left = t.find(std::string_view(token).substr(0, cut));
      if (!left) continue;
      const auto right = t.find(std::string_view(token).substr(cut));
      if (right) t.token_pairs.emplace(detail::merge_key(*left, *right), id);
    }
  }
  for (int b = 0; b < 256; ++b) {
    const auto single = t.find(std::string(1, static_cast<char>(b)));
    t.single_byte_tokens[static_cast<std::size_t>(b)] = single ? *single : -1;
    const std::string name = std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">";
    std::optional<std::int32_t> id = t.find(name);
    if (!id) id = t.find(std::string(1, static_cast<char>(b)));
    if (!id) id = t.vocabulary.special.unknown;
    t.byte_tokens[static_cast<std::size_t>(b)] = id ? *id : -1;
  }
}

Expected<bool> build_bpe(TokenizerTables& t) {
  const std::vector<std::string>& merges = t.vocabulary.merges;
  if (merges.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    return invalid_argument(std::string("tokenizer.ggml.merges has too many entries"));
  }
  t.merges.reserve(merges.size());
  std::string joined;
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const std::string& merge = merges[rank];
    auto where = [&] {
      return "tokenizer.ggml.merges[" + std::to_string(rank) + "] = " + quoted(merge);
    };
    const std::size_t space = merge.find(' ', 1);
    if (space == std::string::npos || space + 1 == merge.size()) {
      return invalid_argument(where() + " is not two tokens separated by a space");
    }
    const std::string_view left(merge.data(), space);
    const std::string_view right(merge.data() + space + 1, merge.size() - space - 1);
    const auto left_id = t.find(left);
    if (!left_id) return invalid_argument(where() + ": " + quoted(left) + " is not a token");
    const auto right_id = t.find(right);
    if (!right_id) return invalid_argument(where() + ": " + quoted(right) + " is not a token");
    joined.assign(left);
    joined.append(right);
    const auto result = t.find(joined);
    if (!result) return invalid_argument(where() + ": the merged text " + quoted(joined) + " is not a token");
    // A repeated pair keeps its first (highest-priority) rank, as llama.cpp does.
    t.merges.try_emplace(detail::merge_key(*left_id, *right_id),
                         detail::Merge{static_cast<std::int32_t>(rank), *result});
  }
  for (int b = 0; b < 256; ++b) {
    const auto id = t.find(detail::ByteLevel::instance().encode(static_cast<std::uint8_t>(b)));
    t.byte_char_tokens[static_cast<std::size_t>(b)] = id ? *id : -1;
  }
  const Vocabulary& v = t.vocabulary;
  const detail::PreTokenizerSpec* spec =
      v.pre_patterns.empty() ? detail::find_pre_tokenizer(v.pre) : nullptr;
  const std::vector<std::string_view> patterns =
      spec != nullptr ? spec->patterns
                      : std::vector<std::string_view>(v.pre_patterns.begin(), v.pre_patterns.end());
  auto splitter = detail::RegexSplitter::compile(patterns);
  if (!splitter) return unexpected(splitter.error());
  t.splitter = std::move(*splitter);
  t.ignore_merges = spec != nullptr ? spec->ignore_merges : v.ignore_merges;
  return true;
}

}  // namespace

Tokenizer::Tokenizer(std::unique_ptr<const TokenizerTables> tables) : tables_(std::move(tables)) {}
Tokenizer::~Tokenizer() = default;

Expected<std::unique_ptr<Tokenizer>> Tokenizer::create(Vocabulary vocabulary) {
  if (auto problem = check_vocabulary_shape(vocabulary)) return invalid_argument(*problem);
  auto tables = std::make_unique<TokenizerTables>();
  tables->vocabulary = std::move(vocabulary);
  if (auto built = build_tokens(*tables); !built) return unexpected(built.error());
  build_special(*tables);
  if (tables->vocabulary.model == TokenizerModel::spm) {
    build_spm(*tables);
  } else if (auto built = build_bpe(*tables); !built) {
    return unexpected(built.error());
  }
  detail::build_special_index(*tables, /*parse_special=*/false, tables->plain_index);
  detail::build_special_index(*tables, /*parse_special=*/true, tables->special_index);
  tables->pieces.reserve(static_cast<std::size_t>(tables->size));
  for (std::size_t id = 0; id < static_cast<std::size_t>(tables->size); ++id) {
    tables->pieces.push_back(render_piece(*tables, id));
  }
  return std::unique_ptr<Tokenizer>(new Tokenizer(std::move(tables)));
}

Expected<std::vector<std::int32_t>> Tokenizer::encode(std::string_view text,
                                                      EncodeOptions options) const {
  const TokenizerTables& t = *tables_;
  const Vocabulary& v = t.vocabulary;
  std::vector<detail::Fragment> fragments;
  detail::partition_special(t, text, options.parse_special, fragments);
  std::vector<std::int32_t> out;
  out.reserve(text.size() / 3 + 4);
  if (options.add_bos && v.add_bos) out.push_back(*v.special.bos);
  if (v.model == TokenizerModel::spm) {
    detail::SpmEncoder encoder(t);
    std::string escaped;
    bool after_special = true;  // the start counts as "after a special token"
    for (const detail::Fragment& fragment : fragments) {
      if (fragment.token >= 0) {
        out.push_back(fragment.token);
        after_special = true;
        continue;
      }
      escaped.clear();
      if (t.space_prefix && after_special) escaped += kSpaceMark;
      for (const char c : text.substr(fragment.offset, fragment.length)) {
        if (c == ' ') escaped += kSpaceMark;
        else escaped += c;
      }
      if (auto done = encoder.encode(escaped, out); !done) return unexpected(done.error());
      after_special = false;
    }
  } else {
    detail::BpeEncoder encoder(t);
    for (const detail::Fragment& fragment : fragments) {
      if (fragment.token >= 0) {
        out.push_back(fragment.token);
        continue;
      }
      auto done = encoder.encode(text.substr(fragment.offset, fragment.length), out);
      if (!done) return unexpected(done.error());
    }
  }
  if (options.add_eos && v.add_eos) out.push_back(*v.special.eos);
  return out;
}

Expected<std::string_view> Tokenizer::piece(std::int32_t id, bool render_special) const {
  const TokenizerTables& t = *tables_;
  if (id < 0 || id >= t.size) {
    return invalid_argument("token id " + std::to_string(id) + " is outside the vocabulary (" +
                      std::to_string(t.size) + " tokens)");
  }
  const auto i = static_cast<std::size_t>(id);
  if (!render_special && (t.attrs[i] & (detail::kAttrControl | detail::kAttrUnknown))) {
    return std::string_view();
  }
  return std::string_view(t.pieces[i]);
}

Expected<std::string> Tokenizer::decode(std::span<const std::int32_t> ids, bool render_special) const {
  std::string out;
  for (std::size_t k = 0; k < ids.size(); ++k) {
    auto text = piece(ids[k], render_special);
    if (!text) return unexpected(text.error());
    std::string_view p = *text;
    if (k == 0 && tables_->space_prefix && !p.empty() && p.front() == ' ') p.remove_prefix(1);
    out += p;
  }
  return out;
}

std::int32_t Tokenizer::vocab_size() const noexcept { return tables_->size; }
std::optional<std::int32_t> Tokenizer::bos() const noexcept { return tables_->vocabulary.special.bos; }
std::optional<std::int32_t> Tokenizer::eos() const noexcept { return tables_->vocabulary.special.eos; }
std::optional<std::int32_t> Tokenizer::eot() const noexcept { return tables_->eot; }

bool Tokenizer::is_end_of_generation(std::int32_t id) const noexcept {
  return id >= 0 && id < tables_->size && tables_->end_of_generation[static_cast<std::size_t>(id)];
}

bool Tokenizer::is_control(std::int32_t id) const noexcept {
  return id >= 0 && id < tables_->size &&
         (tables_->attrs[static_cast<std::size_t>(id)] & detail::kAttrControl) != 0;
}

const Vocabulary& Tokenizer::vocabulary() const noexcept { return tables_->vocabulary; }

}  // namespace lpx::core
