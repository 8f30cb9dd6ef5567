#include "engine/sampler_vocabulary.hpp"

namespace lpx::core {
namespace {

// FNV-1a over every piece (and its length) and the end-of-generation ids.
class Fingerprint {
 public:
  void add(const void* data, std::size_t n) noexcept {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) hash_ = (hash_ ^ bytes[i]) * 1099511628211ULL;
  }
  std::uint64_t value() const noexcept { return hash_; }

 private:
  std::uint64_t hash_ = 14695981039346656037ULL;
};

}  // namespace

SamplerVocabulary::SamplerVocabulary(const Tokenizer& tokenizer) {
  const auto n = static_cast<std::uint32_t>(tokenizer.vocab_size());
  pieces_.reserve(n);
  lengths_.reserve(n);
  Fingerprint fingerprint;
  for (std::uint32_t id = 0; id < n; ++id) {
    // Control and unknown tokens render nothing: length 0 (a grammar never allows them).
    const std::string_view piece = tokenizer.piece(static_cast<std::int32_t>(id)).value_or("");
    pieces_.push_back(piece.data());
    lengths_.push_back(static_cast<std::uint32_t>(piece.size()));
    const std::uint32_t length = lengths_.back();
    fingerprint.add(&length, sizeof length);
    fingerprint.add(piece.data(), piece.size());
    if (tokenizer.is_end_of_generation(static_cast<std::int32_t>(id))) {
      end_of_generation_.push_back(static_cast<std::int32_t>(id));
      fingerprint.add(&id, sizeof id);
    }
  }
  view_.struct_size = sizeof(lpx_vocabulary);
  view_.n_vocab = n;
  view_.pieces = pieces_.data();
  view_.piece_lengths = lengths_.data();
  view_.end_of_generation = end_of_generation_.data();
  view_.end_of_generation_count = static_cast<std::uint32_t>(end_of_generation_.size());
  view_.fingerprint = fingerprint.value();
}

Expected<bool> SamplerVocabulary::bind(const PluginInstance& link) const {
  const lpx_sampler_api& api = link.api<lpx_sampler_api>();
  if (api.bind_vocabulary == nullptr) return true;  // a 2.0 plugin, or one that needs no text
  if (lpx_status* status = api.bind_vocabulary(link.raw(), &view_)) {
    return unexpected(
        take_status(status).with_context("sampler '" + link.library().description().name + "'"));
  }
  return true;
}

}  // namespace lpx::core
