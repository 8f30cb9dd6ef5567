#include "tokenizer/spm_encoder.hpp"

#include <algorithm>

#include "tokenizer/utf8.hpp"

namespace lpx::core::detail {
namespace {

// Heap order: true when `a` ranks below `b`.
bool lower_priority(const auto& a, const auto& b) {
  return a.score < b.score || (a.score == b.score && a.left > b.left);
}

}  // namespace

void SpmEncoder::push(const Bigram& bigram) {
  queue_.push_back(bigram);
  std::push_heap(queue_.begin(), queue_.end(), [](const Bigram& a, const Bigram& b) {
    return lower_priority(a, b);
  });
}

SpmEncoder::Bigram SpmEncoder::pop() {
  std::pop_heap(queue_.begin(), queue_.end(), [](const Bigram& a, const Bigram& b) {
    return lower_priority(a, b);
  });
  const Bigram top = queue_.back();
  queue_.pop_back();
  return top;
}

std::int32_t SpmEncoder::join(const Symbol& left, const Symbol& right) const {
  if (left.id >= 0 && right.id >= 0) {
    const auto it = tables_.token_pairs.find(merge_key(left.id, right.id));
    return it == tables_.token_pairs.end() ? -1 : it->second;
  }
  // Symbols are adjacent slices of the text, so the pair's text is one contiguous view.
  const auto found = tables_.find(std::string_view(left.text, left.length + right.length));
  return found ? *found : -1;
}

float SpmEncoder::score(std::int32_t id) const {
  const std::vector<float>& scores = tables_.vocabulary.scores;
  return scores.empty() ? 0.0f : scores[static_cast<std::size_t>(id)];
}

void SpmEncoder::try_add(std::int32_t left, std::int32_t right) {
  if (left < 0 || right < 0) return;
  const Symbol& l = symbols_[static_cast<std::size_t>(left)];
  const Symbol& r = symbols_[static_cast<std::size_t>(right)];
  const std::int32_t id = join(l, r);
  if (id >= 0) push(Bigram{left, right, score(id), l.length + r.length, id});
}

Expected<bool> SpmEncoder::encode(std::string_view text, std::vector<std::int32_t>& out) {
  symbols_.clear();
  if (text.empty()) return true;
  std::size_t offset = 0;
  while (offset < text.size()) {
    const std::size_t length = std::min(utf8_sequence_length(static_cast<unsigned char>(text[offset])),
                                        text.size() - offset);
    const auto index = static_cast<std::int32_t>(symbols_.size());
    const std::string_view character(text.data() + offset, length);
    std::int32_t id = -1;
    if (length == 1) {
      id = tables_.single_byte_tokens[static_cast<unsigned char>(character[0])];
    } else if (const auto found = tables_.find(character)) {
      id = *found;
    }
    symbols_.push_back(Symbol{character.data(), static_cast<std::uint32_t>(length), id, index - 1,
                              index + 1});
    offset += length;
  }
  const auto n = static_cast<std::int32_t>(symbols_.size());
  std::int32_t first = 0;
  for (std::int32_t i = 1; i < n; ++i) {
    const Symbol& symbol = symbols_[static_cast<std::size_t>(i)];
    const bool space_mark = symbol.length == 3 && symbol.text[0] == '\xE2' &&
                            symbol.text[1] == '\x96' && symbol.text[2] == '\x81';
    if (!space_mark) continue;
    const Symbol& before = symbols_[static_cast<std::size_t>(i - 1)];
    if (!tables_.joins_space_mark.contains(std::string_view(before.text, before.length))) {
      if (auto done = encode_segment(first, i, out); !done) return done;
      first = i;
    }
  }
  return encode_segment(first, n, out);
}

void SpmEncoder::merge_short(std::int32_t first, std::int32_t last) {
  short_symbols_.assign(symbols_.begin() + first, symbols_.begin() + last);
  short_pairs_.clear();
  for (std::size_t k = 0; k + 1 < short_symbols_.size(); ++k) {
    short_pairs_.push_back(join(short_symbols_[k], short_symbols_[k + 1]));
  }
  while (true) {
    std::size_t best = short_pairs_.size();
    float best_score = 0.0f;
    for (std::size_t k = 0; k < short_pairs_.size(); ++k) {
      if (short_pairs_[k] < 0) continue;
      const float s = score(short_pairs_[k]);
      if (best == short_pairs_.size() || s > best_score) {
        best = k;
        best_score = s;
      }
    }
    if (best == short_pairs_.size()) break;
    Symbol& left = short_symbols_[best];
    left.length += short_symbols_[best + 1].length;
    left.id = short_pairs_[best];
    short_symbols_.erase(short_symbols_.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    short_pairs_.erase(short_pairs_.begin() + static_cast<std::ptrdiff_t>(best));
    if (best > 0) short_pairs_[best - 1] = join(short_symbols_[best - 1], short_symbols_[best]);
    if (best < short_pairs_.size()) short_pairs_[best] = join(short_symbols_[best], short_symbols_[best + 1]);
  }
}

void SpmEncoder::merge_long(std::int32_t first, std::int32_t last) {
  queue_.clear();
  symbols_[static_cast<std::size_t>(first)].prev = -1;
  symbols_[static_cast<std::size_t>(last - 1)].next = -1;
  for (std::int32_t i = first + 1; i < last; ++i) try_add(i - 1, i);
  while (!queue_.empty()) {
    const Bigram bigram = pop();
    Symbol& left = symbols_[static_cast<std::size_t>(bigram.left)];
    Symbol& right = symbols_[static_cast<std::size_t>(bigram.right)];
    // Stale: one side was merged away or grew since the pair was queued.
    if (left.length == 0 || right.length == 0 || left.length + right.length != bigram.length) continue;
    left.length += right.length;
    left.id = bigram.id;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) symbols_[static_cast<std::size_t>(right.next)].prev = bigram.left;
    try_add(left.prev, bigram.left);
    try_add(bigram.left, left.next);
  }
}

Expected<bool> SpmEncoder::encode_segment(std::int32_t first, std::int32_t last,
                                          std::vector<std::int32_t>& out) {
  if (last - first <= 48) {
    merge_short(first, last);
    for (const Symbol& symbol : short_symbols_) {
      if (auto done = emit(symbol, out); !done) return done;
    }
    return true;
  }
  merge_long(first, last);
  for (std::int32_t i = first; i != -1; i = symbols_[static_cast<std::size_t>(i)].next) {
    if (auto done = emit(symbols_[static_cast<std::size_t>(i)], out); !done) return done;
  }
  return true;
}

Expected<bool> SpmEncoder::emit(const Symbol& symbol, std::vector<std::int32_t>& out) const {
  if (symbol.id >= 0) {
    out.push_back(symbol.id);
    return true;
  }
  // No token covers this character: one byte token per byte.
  for (const char c : std::string_view(symbol.text, symbol.length)) {
    const std::int32_t id = tables_.byte_tokens[static_cast<unsigned char>(c)];
    if (id < 0) {
      static constexpr char kHex[] = "0123456789ABCDEF";
      const auto b = static_cast<unsigned char>(c);
      return invalid_argument(std::string("cannot encode byte 0x") + kHex[b >> 4] + kHex[b & 15] +
                        ": the vocabulary has no byte token <0x" + kHex[b >> 4] + kHex[b & 15] +
                        ">, no single-byte token and no unknown token");
    }
    out.push_back(id);
  }
  return true;
}

}  // namespace lpx::core::detail
