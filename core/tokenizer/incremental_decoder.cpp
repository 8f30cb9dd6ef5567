#include "tokenizer/tokenizer.hpp"
#include "tokenizer/tokenizer_tables.hpp"
#include "tokenizer/utf8.hpp"

namespace lpx::core {

IncrementalDecoder::IncrementalDecoder(const Tokenizer& tokenizer, bool render_special)
    : tokenizer_(&tokenizer), render_special_(render_special) {}

Expected<std::string> IncrementalDecoder::push(std::int32_t id) {
  auto text = tokenizer_->piece(id, render_special_);
  if (!text) return unexpected(text.error());
  std::string_view piece = *text;
  // Same rule as Tokenizer::decode: the first id of the stream loses its space prefix.
  if (first_ && tokenizer_->tables_->space_prefix && !piece.empty() && piece.front() == ' ') {
    piece.remove_prefix(1);
  }
  first_ = false;
  held_ += piece;
  const std::size_t complete = held_.size() - detail::incomplete_utf8_tail(held_);
  std::string out = held_.substr(0, complete);
  held_.erase(0, complete);
  return out;
}

std::string IncrementalDecoder::flush() {
  std::string out;
  out.swap(held_);
  return out;
}

void IncrementalDecoder::reset() {
  first_ = true;
  held_.clear();
}

}  // namespace lpx::core
