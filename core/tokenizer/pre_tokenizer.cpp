#include "tokenizer/pre_tokenizer.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "tokenizer/utf8.hpp"

namespace lpx::core::detail {
namespace {

// The word patterns of the models' own tokenizers (tokenizer.json), in the form llama.cpp runs them:
// case-insensitive groups spelled out as classes, and the GPT-2 pattern without its final `|\s+`
// (text no alternative matches becomes a piece of its own anyway).
constexpr std::string_view kGpt2 =
    R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))re";
constexpr std::string_view kLlama3 =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kQwen2 =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kDeepseekV3Words =
    R"re([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
// Tekken and GPT-4o: an upper-case run then a lower-case run, written with lookaheads (letters that
// are not a-z / not A-Z) the way llama.cpp adapted them from \p{Lu}/\p{Ll} classes.
constexpr std::string_view kTekken =
    R"re([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kGpt4o =
    R"re([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

const std::vector<PreTokenizerSpec>& specs() {
  static const std::vector<PreTokenizerSpec> table = {
      {{"default"}, {R"re([\p{P}\$\+<=>\^~\|]+)re", kGpt2, R"re(\p{N}+)re", "[0-9][0-9][0-9]"}},
      {{"gpt-2", "phi-2", "mpt", "olmo", "jais", "trillion", "granite-docling", "gigachat",
        "a.x-4.0", "mellum", "exaone4"},
       {kGpt2}},
      {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2"},
       {kLlama3},
       /*ignore_merges=*/true,
       /*add_bos=*/true},
      {{"dbrx", "smaug-bpe"}, {kLlama3}},
      {{"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "stablelm2", "hunyuan",
        "solar-open"},
       {kQwen2}},
      {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b",
        "mellum2"},
       {R"re(\p{N})re", kGpt2}},
      {{"falcon"}, {R"re([\p{P}\$\+<=>\^~\|`]+)re", kGpt2, "[0-9][0-9][0-9]"}},
      {{"deepseek-coder"},
       {"[\r\n]", R"re(\s?\p{L}+)re", R"re(\s?\p{P}+)re", "[一-龥ࠀ-一가-퟿]+", R"re(\p{N})re"}},
      {{"deepseek-v3"}, {R"re(\p{N}{1,3})re", "[一-龥぀-ゟ゠-ヿ]+", kDeepseekV3Words}},
      {{"poro-chat", "bloom", "gpt3-finnish"}, {R"re( ?[^(\s|.,!?…。，、।۔،)]+)re"}},
      {{"tekken"}, {kTekken}, /*ignore_merges=*/true, /*add_bos=*/true},
      {{"gpt-4o", "llama4", "kanana2"}, {kGpt4o}},
  };
  return table;
}

}  // namespace

const PreTokenizerSpec* find_pre_tokenizer(std::string_view name) noexcept {
  for (const PreTokenizerSpec& spec : specs()) {
    if (std::find(spec.names.begin(), spec.names.end(), name) != spec.names.end()) return &spec;
  }
  return nullptr;
}

std::string known_pre_tokenizers() {
  std::vector<std::string_view> names;
  for (const PreTokenizerSpec& spec : specs()) names.insert(names.end(), spec.names.begin(), spec.names.end());
  std::sort(names.begin(), names.end());
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

namespace {

// Code points that Unicode 15.0 and 15.1 assigned to the general categories the patterns name
// (before them: unassigned), with their major category. llama.cpp's tables are Unicode 15.1;
// Debian 12's PCRE2 10.42 knows Unicode 14, where these are unassigned, so its `\p{L}` misses,
// e.g., CJK Extensions H and I and the Kawi script. From the Unicode Character Database: the code
// points whose category is Cn in 14.0.0 and L*, N*, P*, S* or M* in 15.1.0 (Python: unicodedata
// against unicodedata2 15.1.0). Sorted.
struct Addition {
  char32_t first, last;
  char category;
};
constexpr Addition kUnicode15Additions[] = {
    {0x0CF3, 0x0CF3, 'M'},   {0x0ECE, 0x0ECE, 'M'},   {0x2FFC, 0x2FFF, 'S'},   {0x31EF, 0x31EF, 'S'},
    {0x10EFD, 0x10EFF, 'M'}, {0x1123F, 0x11240, 'L'}, {0x11241, 0x11241, 'M'}, {0x11B00, 0x11B09, 'P'},
    {0x11F00, 0x11F01, 'M'}, {0x11F02, 0x11F02, 'L'}, {0x11F03, 0x11F03, 'M'}, {0x11F04, 0x11F10, 'L'},
    {0x11F12, 0x11F33, 'L'}, {0x11F34, 0x11F3A, 'M'}, {0x11F3E, 0x11F42, 'M'}, {0x11F43, 0x11F4F, 'P'},
    {0x11F50, 0x11F59, 'N'}, {0x1342F, 0x1342F, 'L'}, {0x13440, 0x13440, 'M'}, {0x13441, 0x13446, 'L'},
    {0x13447, 0x13455, 'M'}, {0x1B132, 0x1B132, 'L'}, {0x1B155, 0x1B155, 'L'}, {0x1D2C0, 0x1D2D3, 'N'},
    {0x1DF25, 0x1DF2A, 'L'}, {0x1E030, 0x1E06D, 'L'}, {0x1E08F, 0x1E08F, 'M'}, {0x1E4D0, 0x1E4EB, 'L'},
    {0x1E4EC, 0x1E4EF, 'M'}, {0x1E4F0, 0x1E4F9, 'N'}, {0x1F6DC, 0x1F6DC, 'S'}, {0x1F774, 0x1F776, 'S'},
    {0x1F77B, 0x1F77F, 'S'}, {0x1F7D9, 0x1F7D9, 'S'}, {0x1FA75, 0x1FA77, 'S'}, {0x1FA87, 0x1FA88, 'S'},
    {0x1FAAD, 0x1FAAF, 'S'}, {0x1FABB, 0x1FABD, 'S'}, {0x1FABF, 0x1FABF, 'S'}, {0x1FACE, 0x1FACF, 'S'},
    {0x1FADA, 0x1FADB, 'S'}, {0x1FAE8, 0x1FAE8, 'S'}, {0x1FAF7, 0x1FAF8, 'S'}, {0x2B739, 0x2B739, 'L'},
    {0x2EBF0, 0x2EE5D, 'L'}, {0x31350, 0x323AF, 'L'},
};

// The additions to one major category as PCRE2 class items ("\x{11F50}-\x{11F59}..."); empty for
// other categories.
std::string unicode_15_class_items(char category) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  auto append = [](std::string& out, char32_t c) {
    out += "\\x{";
    bool started = false;
    for (int shift = 20; shift >= 0; shift -= 4) {
      const auto digit = static_cast<unsigned>(c >> shift) & 15u;
      if (digit != 0 || started || shift == 0) {
        out += kHex[digit];
        started = true;
      }
    }
    out += '}';
  };
  std::string out;
  for (const Addition& a : kUnicode15Additions) {
    if (a.category != category) continue;
    append(out, a.first);
    if (a.last != a.first) {
      out += '-';
      append(out, a.last);
    }
  }
  return out;
}

bool is_unicode_15_addition(char32_t c) noexcept {
  for (const Addition& a : kUnicode15Additions) {
    if (c >= a.first && c <= a.last) return true;
  }
  return false;
}

}  // namespace

bool has_unicode_15_addition(std::string_view text) noexcept {
  // Only 3-byte sequences led by E0, E2, E3 (U+0800..0FFF, U+2000..3FFF) and 4-byte sequences
  // can hold one. In well-formed UTF-8 every byte from E0 up is a lead byte, so the scan looks at
  // those alone, eight bytes at a time where none is (bits 7, 6 and 5 of no byte all set).
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    if (i + 8 <= n) {
      std::uint64_t w = 0;
      std::memcpy(&w, p + i, 8);
      if ((w & (w << 1) & (w << 2) & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
    const unsigned char lead = p[i];
    if ((lead == 0xE0 || lead == 0xE2 || lead == 0xE3) && i + 2 < n) {
      const char32_t c = (char32_t{lead & 0x0Fu} << 12) | (char32_t{p[i + 1] & 0x3Fu} << 6) |
                         char32_t{p[i + 2] & 0x3Fu};
      if (is_unicode_15_addition(c)) return true;
    } else if (lead >= 0xF0 && i + 3 < n) {
      const char32_t c = (char32_t{lead & 0x07u} << 18) | (char32_t{p[i + 1] & 0x3Fu} << 12) |
                         (char32_t{p[i + 2] & 0x3Fu} << 6) | char32_t{p[i + 3] & 0x3Fu};
      if (is_unicode_15_addition(c)) return true;
    }
    ++i;
  }
  return false;
}

std::string adapt_pattern_for_pcre2(std::string_view pattern, bool unicode_15_classes) {
  // Unicode's White_Space property, which is what llama.cpp's tables and Hugging Face's regex
  // engines mean by \s. PCRE2 10.42 with UCP also counts U+180E (Mongolian vowel separator, a
  // format character since Unicode 6.3), so \s is spelled out instead of trusted.
  static constexpr std::string_view kWhiteSpace =
      R"(\t\n\x{0B}\f\r\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";
  std::string out;
  out.reserve(pattern.size() + 64);
  bool in_class = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char next = pattern[++i];
      if (next == 's' && in_class) {
        out += kWhiteSpace;
      } else if ((next == 's' || next == 'S') && !in_class) {
        out += next == 's' ? "[" : "[^";
        out += kWhiteSpace;
        out += ']';
      } else if ((next == 'p' || next == 'P' || next == 'x') && i + 1 < pattern.size() &&
                 pattern[i + 1] == '{') {
        // \p{..} and \x{..}: the braces are copied through untouched.
        const std::size_t close = pattern.find('}', i + 1);
        const std::size_t end = close == std::string_view::npos ? pattern.size() : close + 1;
        const std::string_view braces = pattern.substr(i + 1, end - i - 1);
        i = end - 1;
        // \p{L}, \p{N}, \p{P}, \p{S}, \p{M} take Unicode 15's additions: inline inside [...],
        // as a class of their own outside one.
        const std::string extra = unicode_15_classes && next == 'p' && braces.size() == 3
                                      ? unicode_15_class_items(braces[1])
                                      : std::string();
        const bool wrap = !extra.empty() && !in_class;
        if (wrap) out += '[';
        out += '\\';
        out += next;
        out.append(braces);
        out.append(extra);
        if (wrap) out += ']';
      } else {
        out += '\\';
        out += next;
      }
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out += c;
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];  // literal ]
      continue;
    }
    if (in_class && c == ']') in_class = false;
    out += c;
  }
  return out;
}

struct RegexSplitter::Regex {
  explicit Regex(pcre2_code* c) : code(c) {}
  ~Regex() { pcre2_code_free(code); }
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  pcre2_code* code;
};

class RegexSplitter::MatchData {
 public:
  MatchData() : data(pcre2_match_data_create(1, nullptr)) {}
  ~MatchData() {
    pcre2_jit_stack_free(jit_stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
  MatchData(const MatchData&) = delete;
  MatchData& operator=(const MatchData&) = delete;

  // JIT matching starts on PCRE2's 32 KiB machine-stack area; only if a match needs more (very
  // long runs under a lookahead) is a larger stack made, once per MatchData.
  bool grow_jit_stack() {
    if (jit_stack != nullptr) return false;
    context = pcre2_match_context_create(nullptr);
    jit_stack = pcre2_jit_stack_create(64 * 1024, 64 * 1024 * 1024, nullptr);
    if (context == nullptr || jit_stack == nullptr) return false;
    pcre2_jit_stack_assign(context, nullptr, jit_stack);
    return true;
  }

  pcre2_match_data* data;
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* jit_stack = nullptr;
};

RegexSplitter::~RegexSplitter() = default;

Expected<std::shared_ptr<const RegexSplitter>> RegexSplitter::compile(
    const std::vector<std::string_view>& patterns) {
  std::shared_ptr<RegexSplitter> splitter(new RegexSplitter());
  bool widened = false;
  for (std::string_view original : patterns) {
    for (const bool unicode_15 : {false, true}) {
      const std::string pattern = adapt_pattern_for_pcre2(original, unicode_15);
      if (unicode_15) widened = widened || pattern != adapt_pattern_for_pcre2(original, false);
      int error = 0;
      PCRE2_SIZE offset = 0;
      pcre2_code* code = pcre2_compile(
          reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
          PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY | PCRE2_NO_AUTO_CAPTURE, &error, &offset,
          nullptr);
      if (code == nullptr) {
        std::array<PCRE2_UCHAR, 256> message{};
        pcre2_get_error_message(error, message.data(), message.size());
        return invalid_argument("pre-tokenizer regex '" + std::string(original) +
                                "' does not compile at " + std::to_string(offset) + ": " +
                                reinterpret_cast<const char*>(message.data()));
      }
      // Without JIT (unsupported CPU) pcre2_match interprets the pattern: slower, same results.
      pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
      (unicode_15 ? splitter->widened_ : splitter->regexes_).push_back(std::make_unique<Regex>(code));
    }
  }
  if (!widened) splitter->widened_.clear();
  return std::shared_ptr<const RegexSplitter>(std::move(splitter));
}

std::unique_ptr<RegexSplitter::MatchData, void (*)(RegexSplitter::MatchData*)>
RegexSplitter::make_match_data() const {
  return {new MatchData(), [](MatchData* m) { delete m; }};
}

Expected<bool> RegexSplitter::split(std::string_view text, MatchData& match_data,
                                    std::vector<std::string_view>& out,
                                    std::vector<std::string_view>& spare) const {
  out.clear();
  if (text.empty()) return true;
  if (match_data.data == nullptr) return fail(LPX_ERR_OUT_OF_MEMORY, std::string("out of memory for PCRE2 match data"));
  out.push_back(text);
  // Both sets split alike unless the text holds a code point new in Unicode 15: the narrower
  // classes are the faster ones (~10% on English text), so they run whenever they can.
  const auto& regexes = widened_.empty() || !has_unicode_15_addition(text) ? regexes_ : widened_;
  for (const auto& regex : regexes) {
    spare.clear();
    for (std::string_view piece : out) {
      const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
      std::size_t done = 0;   // end of the last piece emitted
      std::size_t start = 0;  // where the next search starts
      while (start < piece.size()) {
        int rc = pcre2_match(regex->code, subject, piece.size(), start, PCRE2_NO_UTF_CHECK,
                             match_data.data, match_data.context);
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT && match_data.grow_jit_stack()) {
          rc = pcre2_match(regex->code, subject, piece.size(), start, PCRE2_NO_UTF_CHECK,
                           match_data.data, match_data.context);
        }
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
          std::array<PCRE2_UCHAR, 256> message{};
          pcre2_get_error_message(rc, message.data(), message.size());
          return invalid_argument(std::string("pre-tokenizer regex failed: ") +
                            reinterpret_cast<const char*>(message.data()));
        }
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match_data.data);
        const std::size_t begin = ovector[0];
        const std::size_t end = ovector[1];
        if (end == begin) {  // an empty match splits nothing; step over one character
          start = begin + utf8_sequence_length(static_cast<unsigned char>(piece[begin]));
          continue;
        }
        if (begin > done) spare.push_back(piece.substr(done, begin - done));
        spare.push_back(piece.substr(begin, end - begin));
        done = end;
        start = end;
      }
      if (done < piece.size()) spare.push_back(piece.substr(done));
    }
    out.swap(spare);
  }
  return true;
}

}  // namespace lpx::core::detail
