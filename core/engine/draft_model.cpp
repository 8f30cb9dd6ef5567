#include "engine/draft_model.hpp"

#include <algorithm>
#include <cmath>

#include "engine/runnable_model.hpp"

namespace lpx::core {
namespace {

// The draft proposes ids the engine's model will be fed, and is fed the model's: both must mean
// the same text by every id they share. Their counts may differ a little (vocabularies padded
// to a round size); ids only one model has are never exchanged (DraftModel::prepare and
// pickable_). As llama.cpp allows, at most 128.
constexpr std::size_t kMaxVocabularyDifference = 128;

Expected<bool> check_same_vocabulary(const ModelFile& draft, const Vocabulary& model) {
  auto vocabulary = load_vocabulary(draft);
  if (!vocabulary) return unexpected(vocabulary.error());
  const auto& ours = model.tokens;
  const auto& theirs = vocabulary->tokens;
  const std::string refuse = draft.path() + ": a draft model must have the model's vocabulary";
  const std::size_t difference = theirs.size() > ours.size() ? theirs.size() - ours.size() : ours.size() - theirs.size();
  if (difference > kMaxVocabularyDifference) {
    return invalid_argument(refuse + "; it has " + std::to_string(theirs.size()) + " tokens, the model " +
                            std::to_string(ours.size()));
  }
  for (std::size_t id = 0; id < std::min(ours.size(), theirs.size()); ++id) {
    if (theirs[id] != ours[id]) {
      return invalid_argument(refuse + "; token " + std::to_string(id) + " is '" + theirs[id] +
                              "' there and '" + ours[id] + "' in the model");
    }
  }
  return true;
}

}  // namespace

Expected<std::unique_ptr<DraftModel>> DraftModel::create(std::unique_ptr<ModelFile> file,
                                                         const Vocabulary& vocabulary, std::uint32_t n_vocab,
                                                         Backend& backend, const EngineConfig& config) {
  if (auto same = check_same_vocabulary(*file, vocabulary); !same) return unexpected(same.error());
  auto runnable = describe_runnable(*file, config.context_size, backend);
  if (!runnable) return unexpected(runnable.error().prefixed("draft model: "));
  try {
    return std::unique_ptr<DraftModel>(new DraftModel(std::move(file), std::move(runnable->model), n_vocab, backend, config));
  } catch (const std::bad_alloc&) {
    return fail(LPX_ERR_OUT_OF_MEMORY, std::string("out of memory sizing the draft model's KV cache; lower kv_cache_tokens"));
  }
}

DraftModel::DraftModel(std::unique_ptr<ModelFile> file, TransformerModel model, std::uint32_t n_vocab,
                       Backend& backend, const EngineConfig& config)
    : file_(std::move(file)),
      model_(std::move(model)),
      config_(config),
      // The guess steps have a row per sequence; the catch-up steps at most batch_tokens.
      max_rows_(std::max(config.batch_tokens, config.max_sequences)) {
  cache_ = std::make_unique<KvCache>(kv_cache_shape(model_, config_));
  forward_ = std::make_unique<TransformerForward>(model_, backend, *cache_, max_rows_, config_.context_size);
  batch_.reserve(max_rows_, max_rows_);  // a run per decoded row
  row_jobs_.reserve(config_.max_sequences);
  logits_.resize(std::size_t{config_.max_sequences} * forward_->n_vocab());
  n_vocab_ = forward_->n_vocab();
  pickable_ = std::min(n_vocab, n_vocab_);
}

void DraftModel::prepare_state(DraftSequence& state) const {
  state.blocks = BlockTable(config_.context_size, config_.block_size);
  state.fed.reserve(config_.context_size);
}

void DraftModel::prepare(DraftJob& job) {
  job.draft->clear();
  if (job.room == 0) return;
  DraftSequence& s = *job.state;
  const std::vector<std::int32_t>& text = *job.text;
  const std::size_t n = text.size();  // `next` goes at position n
  const auto at = [&](std::size_t i) { return i < n ? text[i] : job.next; };
  // The guesses the model confirmed since the last call are already in the cache.
  while (s.confirmed < s.fed.size() && s.confirmed <= n && s.fed[s.confirmed] == at(s.confirmed)) ++s.confirmed;
  // `next` is fed again even when it is there: its logits give the first guess.
  s.confirmed = std::min(s.confirmed, n);
  s.fed.resize(s.confirmed);
  // A token the draft has no row for (a padding id only the model has) is never fed to it.
  for (std::size_t i = s.fed.size(); i <= n; ++i) {
    if (static_cast<std::uint32_t>(at(i)) >= n_vocab_) {
      job.room = 0;
      return;
    }
  }
  // Positions up to the last guess fed back (the last one is only picked).
  if (!cache_->ensure(s.blocks, static_cast<std::uint32_t>(n + job.room))) job.room = 0;
}

void DraftModel::take_pick(DraftJob& job, std::size_t row) {
  const float* logits = logits_.data() + row * n_vocab_;
  const std::size_t best = static_cast<std::size_t>(std::max_element(logits, logits + pickable_) - logits);
  bool keep = true;
  if (config_.draft_p_min > 0) {
    // The draft's own probability of its pick: 1 / sum(exp(l - max)).
    double sum = 0;
    for (std::size_t i = 0; i < pickable_; ++i) sum += std::exp(static_cast<double>(logits[i] - logits[best]));
    keep = 1.0 / sum >= static_cast<double>(config_.draft_p_min);
  }
  if (keep) job.draft->push_back(static_cast<std::int32_t>(best));
  if (!keep || job.draft->size() >= job.room) job.room = static_cast<std::uint32_t>(job.draft->size());
}

void DraftModel::draft(std::span<DraftJob> jobs, std::uint32_t catch_up_rows) {
  for (DraftJob& job : jobs) prepare(job);
  // One step brings every sequence's cache up to its text and `next`, within catch_up_rows
  // rows: prefilled positions as one run, decoded ones a row each, as the model computed them.
  // A sequence that gets there has its first guess; one that does not drafts nothing yet.
  batch_.clear();
  row_jobs_.clear();
  std::uint32_t budget = std::min(catch_up_rows, max_rows_ - static_cast<std::uint32_t>(jobs.size()));
  for (DraftJob& job : jobs) {
    if (job.room == 0) continue;
    DraftSequence& s = *job.state;
    const std::size_t n = job.text->size();
    // Always the row of `next`, which the guess steps' row budget has room for.
    while (s.fed.size() <= n && (budget > 0 || s.fed.size() == n)) {
      const std::size_t from = s.fed.size();
      const std::size_t run_end = from < job.prefilled ? std::min(job.prefilled, n + 1) : from + 1;
      const auto rows = static_cast<std::uint32_t>(std::min<std::size_t>(run_end - from, std::max(budget, 1u)));
      batch_.sequences.push_back({&s.blocks, batch_.rows(), rows});
      for (std::uint32_t i = 0; i < rows; ++i) {
        const std::size_t p = from + i;
        s.fed.push_back(p < n ? (*job.text)[p] : job.next);
        batch_.tokens.push_back(s.fed.back());
        batch_.positions.push_back(static_cast<std::int32_t>(p));
      }
      budget -= std::min(budget, rows);
    }
    if (s.fed.size() == n + 1) {
      batch_.output_rows.push_back(batch_.rows() - 1);
      row_jobs_.push_back(&job);
    } else {
      job.room = 0;  // still catching up
    }
  }
  if (batch_.rows() == 0) return;
  forward_->run(batch_, logits_.data());
  for (std::size_t o = 0; o < row_jobs_.size(); ++o) take_pick(*row_jobs_[o], o);
  // Then one row per sequence and step: its last guess, at the position after the one before.
  for (;;) {
    batch_.clear();
    row_jobs_.clear();
    for (DraftJob& job : jobs) {
      if (job.draft->empty() || job.draft->size() >= job.room) continue;
      DraftSequence& s = *job.state;
      const auto position = static_cast<std::int32_t>(s.fed.size());
      s.fed.push_back(job.draft->back());
      batch_.sequences.push_back({&s.blocks, batch_.rows(), 1});
      batch_.tokens.push_back(s.fed.back());
      batch_.positions.push_back(position);
      batch_.output_rows.push_back(batch_.rows() - 1);
      row_jobs_.push_back(&job);
    }
    if (batch_.rows() == 0) break;
    forward_->run(batch_, logits_.data());
    for (std::size_t o = 0; o < row_jobs_.size(); ++o) take_pick(*row_jobs_[o], o);
  }
}

void DraftModel::release(DraftSequence& state) {
  cache_->release(state.blocks);
  state.fed.clear();
  state.confirmed = 0;
}

}  // namespace lpx::core
