// Speculative decoding with a draft model ([speculative] mode = "draft"): a second, smaller
// model with the same vocabulary guesses the next tokens of every decoding sequence, greedily,
// and the engine verifies the guesses with its own model exactly as it verifies n-gram drafts
// (engine_step.cpp). The draft decides nothing about which tokens are picked, only how many the
// model can confirm in one step.
//
// The draft runs on the engine's backend with its own KV cache, as many positions as the
// engine's pool, taken by a sequence as it grows and given back when its request ends. When
// that pool is out of blocks, a sequence simply drafts nothing in that step. Each call drafts
// for every sequence together: one forward step that brings each sequence's draft cache up to
// its text, then one step per further guessed token. A sequence's first call has its whole
// prompt to catch up with: that runs in chunks of a bounded number of rows per call (as the
// model's own prefill does while others decode), and the sequence drafts once it has caught up.
//
// Threading: the engine thread only. No allocation: a sequence's state is sized at intake.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/backend.hpp"
#include "engine/batch.hpp"
#include "engine/draft_sequence.hpp"
#include "engine/engine_config.hpp"
#include "engine/kv_cache.hpp"
#include "engine/transformer_forward.hpp"
#include "model/model_file.hpp"
#include "tokenizer/vocabulary.hpp"
#include "util/expected.hpp"

namespace lpx::core {

// What one sequence asks of a draft call.
struct DraftJob {
  DraftSequence* state;
  const std::vector<std::int32_t>* text;  // the sequence's confirmed tokens
  std::int32_t next;                      // picked, not yet computed: the text continues with it
  std::uint32_t room;                     // the most tokens to guess after `next`
  // Positions of `text` below this were computed by the model in runs of many rows (its
  // prompt), the rest a row at a time; the draft computes its cache the same way, since the
  // two round differently: a model drafting for itself then guesses exactly what it picks.
  std::size_t prefilled;
  std::vector<std::int32_t>* draft;       // out: the guesses, in order (cleared first)
};

class DraftModel {
 public:
  // Opens `file` as a draft for a model with `vocabulary` and `n_vocab` logits: the two must
  // have the same tokens, id for id, and the draft never proposes an id the model has no row
  // for. The draft's architecture, features and weight types must run on `backend` (which must
  // outlive the draft). Sized by `config` (context, pool, rows per step).
  static Expected<std::unique_ptr<DraftModel>> create(std::unique_ptr<ModelFile> file,
                                                      const Vocabulary& vocabulary, std::uint32_t n_vocab,
                                                      Backend& backend, const EngineConfig& config);

  // Fills every job's draft: at most `room` tokens, each the draft model's most likely next
  // token, stopping early at one it gives less than config.draft_p_min; none while the
  // sequence's cache is still catching up with its text, at most `catch_up_rows` rows of which
  // this call computes. Throws EngineError when a kernel fails.
  void draft(std::span<DraftJob> jobs, std::uint32_t catch_up_rows);
  // Sizes a new sequence's state (at intake: drafting allocates nothing per step).
  void prepare_state(DraftSequence& state) const;
  // The sequence's blocks go back to the pool; the state can serve a new sequence.
  void release(DraftSequence& state);

  const std::string& path() const noexcept { return file_->path(); }
  std::size_t kv_cache_bytes() const noexcept { return cache_->bytes(); }

 private:
  DraftModel(std::unique_ptr<ModelFile> file, TransformerModel model, std::uint32_t n_vocab,
             Backend& backend, const EngineConfig& config);
  // Cuts the job's cache back to what still matches its text, and takes the blocks its guesses
  // will be written at; job.room becomes 0 when it cannot draft in this call.
  void prepare(DraftJob& job);
  // Appends the draft's pick for `row` of logits_ to job.draft; when that ends the draft (room
  // reached, or an unsure pick, which is not appended), job.room becomes the draft's length.
  void take_pick(DraftJob& job, std::size_t row);

  std::unique_ptr<ModelFile> file_;
  TransformerModel model_;
  EngineConfig config_;
  std::uint32_t pickable_;  // ids the draft may propose: both models have rows for them
  std::uint32_t n_vocab_;   // the ids the draft can be fed
  std::uint32_t max_rows_;  // rows of one forward step of the draft
  std::unique_ptr<KvCache> cache_;
  std::unique_ptr<TransformerForward> forward_;
  Batch batch_;
  std::vector<DraftJob*> row_jobs_;  // per output row of batch_
  std::vector<float> logits_;        // max_sequences x n_vocab
};

}  // namespace lpx::core
