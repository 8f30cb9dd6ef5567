#include "synth/synthetic_vocabulary.hpp"

#include <unordered_set>

#include "tokenizer/utf8.hpp"

namespace lpx::core::synth {
namespace {

// GPT-2's printable stand-ins for the 256 byte values.
std::vector<std::string> byte_alphabet() {
  std::vector<std::string> out(256);
  int next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    detail::append_utf8(out[static_cast<std::size_t>(b)], static_cast<char32_t>(printable ? b : next++));
  }
  return out;
}

const char* kChatMlTemplate =
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
    "{% endif %}";
const char* kPhi3Template =
    "{% for message in messages %}{{ '<|' + message['role'] + '|>\\n' + message['content'] + "
    "'<|end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}";
const char* kLlama3Template =
    "{{ bos_token }}{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + "
    "'<|end_header_id|>\\n\\n' + message['content'] + '<|eot_id|>' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}";

}  // namespace

SyntheticVocabulary make_vocabulary(const ModelShape& shape) {
  SyntheticVocabulary v;
  // Phi-3's include the four llama.cpp looks up by text in any model named like Phi-3.
  const std::vector<std::string> specials =
      shape.vocabulary == VocabularyStyle::kLlama3
          ? std::vector<std::string>{"<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
                                     "<|end_header_id|>", "<|eot_id|>"}
      : shape.vocabulary == VocabularyStyle::kPhi3
          ? std::vector<std::string>{"<s>", "</s>", "<unk>", "<|endoftext|>", "<|user|>",
                                     "<|assistant|>", "<|end|>"}
          : std::vector<std::string>{"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  v.tokens = byte_alphabet();
  std::unordered_set<std::string> known(v.tokens.begin(), v.tokens.end());
  // Letters (and the space mark Ġ) extend tokens one character at a time: "ab", "abc", …
  std::vector<std::string> letters;
  for (char c = 'a'; c <= 'z'; ++c) letters.emplace_back(1, c);
  for (char c = 'A'; c <= 'Z'; ++c) letters.emplace_back(1, c);
  letters.push_back(v.tokens[' ']);
  const std::size_t wanted = shape.n_vocab - specials.size();
  v.tokens.reserve(shape.n_vocab);
  v.merges.reserve(wanted);
  for (std::size_t i = 0; v.tokens.size() < wanted; ++i) {
    const std::string left = v.tokens[i];  // a copy: push_back may move the strings
    for (const std::string& right : letters) {
      if (v.tokens.size() >= wanted) break;
      std::string joined = left + right;
      if (!known.insert(joined).second) continue;
      v.merges.push_back(left + " " + right);
      v.tokens.push_back(std::move(joined));
    }
  }
  v.token_types.assign(v.tokens.size(), 1);
  for (const std::string& s : specials) {
    v.tokens.push_back(s);
    v.token_types.push_back(3);
  }
  const auto id_of = [&](std::size_t special) { return static_cast<std::int32_t>(wanted + special); };
  if (shape.vocabulary == VocabularyStyle::kLlama3) {
    v.bos = id_of(0);
    v.eos = id_of(4);  // <|eot_id|> ends an assistant turn
    v.chat_template = kLlama3Template;
  } else if (shape.vocabulary == VocabularyStyle::kPhi3) {
    v.bos = id_of(0);  // <s>
    v.eos = id_of(6);  // <|end|> ends a turn
    v.chat_template = kPhi3Template;
  } else {
    v.bos = id_of(0);
    v.eos = id_of(2);  // <|im_end|>
    v.chat_template = kChatMlTemplate;
  }
  return v;
}

}  // namespace lpx::core::synth
