#include "quality/answer_checks.hpp"

#include <algorithm>

#include "lpx/cpp/utf8.hpp"

namespace lpx::core::quality {
namespace {

// The last code point of well-formed UTF-8 `text` (0 when empty).
char32_t last_code_point(std::string_view text) {
  std::size_t start = text.size();
  while (start > 0 && (static_cast<unsigned char>(text[start - 1]) & 0xC0) == 0x80) --start;
  if (start == 0) return 0;
  --start;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data() + start);
  const std::size_t n = text.size() - start;
  if (n == 1) return p[0];
  if (n == 2) return static_cast<char32_t>(((p[0] & 0x1F) << 6) | (p[1] & 0x3F));
  if (n == 3) return static_cast<char32_t>(((p[0] & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F));
  return static_cast<char32_t>(((p[0] & 0x07) << 18) | ((p[1] & 0x3F) << 12) | ((p[2] & 0x3F) << 6) | (p[3] & 0x3F));
}

}  // namespace

bool ends_naturally(std::string_view text) {
  // Trailing spaces and tabs do not count; a line break does (a list or a block just closed).
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  if (text.empty()) return false;
  if (text.back() == '\n' || text.back() == '\r') return true;
  if (text.size() >= 3 && text.substr(text.size() - 3) == "```") return true;
  const char32_t c = last_code_point(text);
  static constexpr char32_t kEnds[] = {
      U'.', U'!', U'?', U')', U']', U'}', U'"', U'\'', U'`', U'*', U'>', U':', U';',
      U'\u2026',                                     // …
      U'\u3002', U'\uFF01', U'\uFF1F', U'\uFF0E',    // 。！？．
      U'\u300D', U'\u300F', U'\u201D', U'\u2019',    // 」』”’
      U'\u00BB', U'\u061F', U'\u06D4', U'\u0964'};   // » ؟ ۔ ।
  if (std::find(std::begin(kEnds), std::end(kEnds), c) != std::end(kEnds)) return true;
  return c >= 0x1F300 && c <= 0x1FAFF;  // pictographs and emoji
}

bool ends_in_loop(const std::vector<std::int32_t>& tokens) {
  const std::size_t n = tokens.size();
  for (std::size_t block = 1; block <= kLoopLongestBlock && block * kLoopRepeats <= n; ++block) {
    std::size_t copies = 1;
    while ((copies + 1) * block <= n &&
           std::equal(tokens.end() - static_cast<std::ptrdiff_t>(block), tokens.end(),
                      tokens.end() - static_cast<std::ptrdiff_t>((copies + 1) * block))) {
      ++copies;
    }
    if (copies >= kLoopRepeats && copies * block >= kLoopShortestRun) return true;
  }
  return false;
}

AnswerFaults check_answer(const Answer& answer, const std::vector<std::string>& specials) {
  AnswerFaults f;
  const std::string& t = answer.text;
  f.empty = std::all_of(t.begin(), t.end(), [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; });
  f.bad_utf8 = !lpx::utf8::is_well_formed(t) || t.find(lpx::utf8::kReplacementCharacter) != std::string::npos;
  f.special_leak = std::any_of(specials.begin(), specials.end(), [&](const std::string& s) {
    return !s.empty() && t.find(s) != std::string::npos;
  });
  f.early_stop = answer.ended_by_model && !f.empty && !ends_naturally(t);
  f.loop = ends_in_loop(answer.tokens);
  return f;
}

}  // namespace lpx::core::quality
