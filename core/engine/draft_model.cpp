#include "engine/draft_model.hpp"

#include <algorithm>
#include <cmath>

#include "engine/runnable_model.hpp"

namespace lpx::core {
namespace {

// The draft proposes ids the engine's model will be fed, so both must mean the same text by
// every id.
Expected<bool> check_same_vocabulary(const ModelFile& draft, const Vocabulary& model) {
  auto vocabulary = load_vocabulary(draft);
  if (!vocabulary) return unexpected(vocabulary.error());
  const auto& ours = model.tokens;
  const auto& theirs = vocabulary->tokens;
  const std::string refuse = draft.path() + ": a draft model must have the model's vocabulary";
  if (theirs.size() != ours.size()) {
    return invalid_argument(refuse + "; it has " + std::to_string(theirs.size()) + " tokens, the model " +
                            std::to_string(ours.size()));
  }
  for (std::size_t id = 0; id < ours.size(); ++id) {
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
  if (backend.has_device_models()) {
    return unsupported(file->path() + ": a draft model runs on the cpu and cpu-scalar backends; backend '" +
                       backend.name() + "' keeps models on its device");
  }
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
    : file_(std::move(file)), model_(std::move(model)), config_(config) {
  KvCacheShape shape;
  shape.n_layer = model_.desc().n_layer;
  shape.n_kv_heads = model_.desc().n_head_kv;
  shape.head_dim = model_.desc().head_dim;
  shape.block_size = config_.block_size;
  shape.n_blocks = (config_.kv_cache_tokens + config_.block_size - 1) / config_.block_size;
  cache_ = std::make_unique<KvCache>(shape);
  forward_ = std::make_unique<TransformerForward>(model_, backend, *cache_, config_.batch_tokens,
                                                  config_.context_size);
  batch_.reserve(config_.batch_tokens, config_.batch_tokens);  // a run per decoded row
  row_jobs_.reserve(config_.max_sequences);
  logits_.resize(std::size_t{config_.max_sequences} * forward_->n_vocab());
  pickable_ = std::min(n_vocab, forward_->n_vocab());
}

bool DraftModel::prepare(DraftJob& job) {
  job.draft->clear();
  if (job.room == 0) return false;
  DraftSequence& s = *job.state;
  const std::vector<std::int32_t>& text = *job.text;
  const std::size_t n = text.size();  // `next` goes at position n
  if (s.blocks.size() == 0 && s.fed.capacity() == 0) {  // once per sequence
    s.blocks = BlockTable(config_.context_size, config_.block_size);
    s.fed.reserve(config_.context_size);
  }
  // The guesses the model confirmed since the last call are already in the cache.
  const auto at = [&](std::size_t i) { return i < n ? text[i] : job.next; };
  while (s.confirmed < s.fed.size() && s.confirmed <= n && s.fed[s.confirmed] == at(s.confirmed)) ++s.confirmed;
  // `next` is fed again even when it is there: its logits give the first guess.
  s.confirmed = std::min(s.confirmed, n);
  s.fed.resize(s.confirmed);
  // Positions up to the last guess fed back (the last one is only picked).
  if (!cache_->ensure(s.blocks, static_cast<std::uint32_t>(n + job.room))) {
    job.room = 0;
    return false;
  }
  return true;
}

bool DraftModel::take_pick(DraftJob& job, std::size_t row) {
  const float* logits = logits_.data() + row * forward_->n_vocab();
  const std::size_t n_vocab = pickable_;
  const std::size_t best = static_cast<std::size_t>(std::max_element(logits, logits + n_vocab) - logits);
  bool keep = true;
  if (config_.draft_p_min > 0) {
    // The draft's own probability of its pick: 1 / sum(exp(l - max)).
    double sum = 0;
    for (std::size_t i = 0; i < n_vocab; ++i) sum += std::exp(static_cast<double>(logits[i] - logits[best]));
    keep = 1.0 / sum >= static_cast<double>(config_.draft_p_min);
  }
  if (keep) job.draft->push_back(static_cast<std::int32_t>(best));
  if (!keep || job.draft->size() >= job.room) {
    job.room = static_cast<std::uint32_t>(job.draft->size());  // done
    return false;
  }
  return true;
}

void DraftModel::draft(std::span<DraftJob> jobs) {
  for (DraftJob& job : jobs) prepare(job);
  // Every sequence's cache up to and including `next`, in chunks of at most batch_tokens rows;
  // the chunk that reaches `next` gives the first guess.
  for (;;) {
    batch_.clear();
    row_jobs_.clear();
    std::uint32_t budget = config_.batch_tokens;
    for (DraftJob& job : jobs) {
      DraftSequence& s = *job.state;
      const std::size_t n = job.text->size();
      if (job.room == 0 || s.fed.size() > n || budget == 0) continue;
      // Prefilled positions as one run, decoded ones a row each, as the model computed them.
      while (s.fed.size() <= n && budget > 0) {
        const std::size_t from = s.fed.size();
        const std::size_t run_end = from < job.prefilled ? std::min(job.prefilled, n + 1) : from + 1;
        const auto rows = static_cast<std::uint32_t>(std::min<std::size_t>(run_end - from, budget));
        batch_.sequences.push_back({&s.blocks, batch_.rows(), rows});
        for (std::uint32_t i = 0; i < rows; ++i) {
          const std::size_t p = from + i;
          s.fed.push_back(p < n ? (*job.text)[p] : job.next);
          batch_.tokens.push_back(s.fed.back());
          batch_.positions.push_back(static_cast<std::int32_t>(p));
        }
        budget -= rows;
      }
      if (s.fed.size() == n + 1) {
        batch_.output_rows.push_back(batch_.rows() - 1);
        row_jobs_.push_back(&job);
      }
    }
    if (batch_.rows() == 0) break;
    forward_->run(batch_, logits_.data());
    for (std::size_t o = 0; o < row_jobs_.size(); ++o) take_pick(*row_jobs_[o], o);
  }
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
