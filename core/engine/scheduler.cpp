#include "engine/scheduler.hpp"

#include <algorithm>
#include <cstddef>

namespace lpx::core {

Scheduler::Scheduler(KvCache& cache, const EngineConfig& config) : cache_(cache), config_(config) {
  running_.reserve(config_.max_sequences);
}

void Scheduler::use_adapter(Sequence& s, const ResidentAdapter* adapter) {
  // Each adapter's prefixes hang off a root of their own (an odd multiplier keeps them apart).
  s.adapter = adapter;
  s.root = PrefixIndex::kRoot + (adapter != nullptr ? adapter->slot() * 0x9e3779b97f4a7c15ULL : 0);
  s.key = s.root;
}

void Scheduler::enqueue(std::unique_ptr<Request> request) { waiting_.push_back(std::move(request)); }

void Scheduler::admit_waiting() {
  blocked_ = nullptr;
  while (!waiting_.empty()) {
    Request& front = *waiting_.front();
    if (!front.cancel && running_.size() >= config_.max_sequences) {
      blocked_ = &front;
      break;
    }
    if (!front.cancel && !admit(front)) {
      if (!running_.empty()) {  // blocks come back as running requests finish
        blocked_ = &front;
        break;
      }
      // Nothing runs, so only idle sessions hold blocks: drop their cached prefixes.
      evict_idle_sessions();
      if (!admit(front)) front.admission_error = "the KV cache cannot hold this request";
    }
    if (!front.cancel && front.admission_error.empty()) front.admitted = Clock::now();
    running_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
  }
}

bool Scheduler::admit(Request& r) {
  Sequence* sequence = nullptr;
  if (r.session != 0) {
    Sequence& s = sessions_.at(r.session)->sequence;
    // Reuse the longest common prefix, but recompute at least the last prompt token: its logits
    // are needed.
    std::size_t common = 0;
    const std::size_t limit = std::min(s.tokens.size(), r.prompt.size() - 1);
    while (common < limit && s.tokens[common] == r.prompt[common]) ++common;
    // The first recomputed row attends back kv_window - 1 positions: they must still be held
    // (a turn that continues the session always finds them; one that rewinds may not).
    const std::uint32_t window = config_.kv_window;
    const std::size_t attended_from = common >= window ? common - window + 1 : 0;
    if (window > 0 && common > 0 && attended_from < s.blocks.first_held_position(config_.block_size)) {
      common = 0;
    }
    // K/V computed under another adapter (or none) is of no use to this one.
    if (s.adapter != r.adapter) common = 0;
    // A block another sequence shares is not rewritten: the cut may fall back to its start.
    s.rewind(cache_.truncate(s.blocks, static_cast<std::uint32_t>(common)));
    if (s.tokens.empty()) use_adapter(s, r.adapter);
    sequence = &s;
  } else {
    r.own_sequence = std::make_unique<Sequence>();
    r.own_sequence->blocks = BlockTable(config_.context_size, config_.block_size);
    r.own_sequence->tokens.reserve(r.positions_needed);
    use_adapter(*r.own_sequence, r.adapter);
    sequence = r.own_sequence.get();
  }
  // The longest cached run of the prompt's full blocks, leaving at least two rows to compute:
  // the last one's logits are needed, and a run of one row attends in another summation order
  // than a prefill's rows (as llama.cpp's does), so its logits would differ from the uncached
  // prompt's.
  const auto eligible =
      static_cast<std::uint32_t>(r.prompt.size() >= 2 ? (r.prompt.size() - 2) / config_.block_size : 0);
  const bool looked_up = config_.prefix_cache && sequence->tokens.empty();
  std::uint32_t mapped = 0;
  if (looked_up) {
    mapped = cache_.map_cached_prefix(sequence->blocks, r.prompt.data(), eligible, sequence->key, sequence->root);
    sequence->published = mapped;
    sequence->tokens.assign(r.prompt.begin(), r.prompt.begin() + std::ptrdiff_t{mapped} * config_.block_size);
  }
  if (!cache_.ensure(sequence->blocks, r.positions_needed)) {
    if (mapped > 0) sequence->rewind(cache_.truncate(sequence->blocks, 0));
    r.own_sequence.reset();
    return false;
  }
  if (looked_up) cache_.count_lookup(mapped, eligible);
  r.sequence = sequence;
  r.cached = static_cast<std::uint32_t>(sequence->tokens.size());
  r.prompt_done = r.cached;
  return true;
}

void Scheduler::publish(Request& r) {
  // Prefilled positions only: their K/V is what a prefill computes. Generated ones (and a
  // session's earlier answers, reused as its prompt) were computed a row at a time, whose
  // attention sums in another order (as llama.cpp's does), so a later prompt mapping them would
  // not get the bits its own prefill gives.
  if (config_.prefix_cache && r.sequence != nullptr) {
    const std::size_t prefilled = std::min<std::size_t>(r.prompt_done, r.sequence->decoded_from);
    cache_.publish(r.sequence->blocks, r.sequence->tokens, prefilled, r.sequence->published, r.sequence->key);
  }
}

void Scheduler::evict_idle_sessions() {
  for (auto& [id, session] : sessions_) {
    if (session->busy) continue;
    session->sequence.rewind(0);
    cache_.release(session->sequence.blocks);
  }
}

void Scheduler::cancel(std::uint64_t request_id) {
  for (auto& r : waiting_) if (r->id == request_id) r->cancel = true;
  for (auto& r : running_) if (r->id == request_id) r->cancel = true;
}

void Scheduler::cancel_session(std::uint64_t session) {
  for (auto& r : waiting_) if (r->session == session) r->cancel = true;
  for (auto& r : running_) if (r->session == session) r->cancel = true;
}

void Scheduler::cancel_all() {
  for (auto& r : waiting_) r->cancel = true;
  for (auto& r : running_) r->cancel = true;
}

void Scheduler::release(Request& r) {
  if (r.session != 0) {
    auto it = sessions_.find(r.session);
    if (it != sessions_.end()) {
      Sequence& s = it->second->sequence;
      // Keep what is cached for the next turn, but only the positions the tokens cover.
      cache_.truncate(s.blocks, static_cast<std::uint32_t>(s.tokens.size()));
      it->second->busy = false;
    }
  } else if (r.own_sequence) {
    cache_.release(r.own_sequence->blocks);
  }
  r.sequence = nullptr;
}

void Scheduler::drop_out_of_window(Request& r) {
  if (config_.kv_window == 0 || r.sequence == nullptr) return;
  // The next row is at position L = tokens.size() and attends from L - kv_window + 1 on.
  const std::size_t computed = r.sequence->tokens.size();
  if (computed < config_.kv_window) return;
  cache_.drop_before(r.sequence->blocks, static_cast<std::uint32_t>(computed - config_.kv_window + 1));
}

void Scheduler::drop_finished() {
  std::erase_if(running_, [](const std::unique_ptr<Request>& r) { return r->sequence == nullptr; });
}

Session* Scheduler::session(std::uint64_t id) {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second.get();
}

void Scheduler::add_session(std::uint64_t id) {
  auto session = std::make_unique<Session>();
  session->sequence.blocks = BlockTable(config_.context_size, config_.block_size);
  session->sequence.tokens.reserve(config_.context_size);
  sessions_[id] = std::move(session);
}

void Scheduler::remove_session(std::uint64_t id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  cache_.release(it->second->sequence.blocks);
  sessions_.erase(it);
}

std::uint32_t Scheduler::waiting_count() const noexcept {
  return static_cast<std::uint32_t>(waiting_.size());
}

std::uint32_t Scheduler::running_count() const noexcept {
  // Finished requests leave running_ at the end of their step; they hold nothing any more.
  return static_cast<std::uint32_t>(std::count_if(
      running_.begin(), running_.end(),
      [](const std::unique_ptr<Request>& r) { return r->sequence != nullptr; }));
}

void Scheduler::plan(Batch& batch, std::vector<Request*>& output_requests) const {
  batch.clear();
  output_requests.clear();
  std::uint32_t budget = config_.batch_tokens;
  // Every decoding sequence's next token comes before any draft: drafts share what is left.
  std::uint32_t decoders = 0;
  for (const auto& owned : running_) {
    if (!owned->cancel && owned->sequence != nullptr && owned->decoding()) ++decoders;
  }
  std::uint32_t draft_budget = budget > decoders ? budget - decoders : 0;
  for (int pass = 0; pass < 2; ++pass) {  // 0: decoding sequences, 1: prefill chunks
    if (pass == 1 && batch.rows() > 0) {
      budget = std::min(budget, config_.prefill_tokens_while_decoding);
    }
    for (const auto& owned : running_) {
      Request& r = *owned;
      if (r.cancel || budget == 0 || r.sequence == nullptr) continue;
      const bool decoding = r.decoding();
      if (decoding != (pass == 0)) continue;
      Sequence& s = *r.sequence;
      const auto first_row = batch.rows();
      const auto first_position = static_cast<std::uint32_t>(s.tokens.size());
      std::uint32_t n = 1;
      if (decoding) {
        // The next token, and as many of the drafts guessed to follow it as the step has room for.
        const auto drafts = std::min<std::uint32_t>(static_cast<std::uint32_t>(r.draft.size()),
                                                    std::min(draft_budget, budget - 1));
        r.draft.resize(drafts);
        draft_budget -= drafts;
        n += drafts;
        batch.tokens.push_back(r.next_token);
        batch.tokens.insert(batch.tokens.end(), r.draft.begin(), r.draft.end());
        for (std::uint32_t i = 0; i < n; ++i) batch.positions.push_back(static_cast<std::int32_t>(first_position + i));
      } else {
        n = std::min<std::uint32_t>(budget, static_cast<std::uint32_t>(r.prompt.size()) - r.prompt_done);
        for (std::uint32_t i = 0; i < n; ++i) {
          batch.tokens.push_back(r.prompt[r.prompt_done + i]);
          batch.positions.push_back(static_cast<std::int32_t>(first_position + i));
        }
      }
      budget -= n;
      if (decoding) {
        // A run of one row each, as a sequence that decodes without drafts has: every row gets
        // the decode arithmetic (a multi-row run would take the prefill kernels, whose
        // different rounding could change a pick), reading the rows before it, whose K/V the
        // step stores first.
        for (std::uint32_t i = 0; i < n; ++i) batch.sequences.push_back({&s.blocks, first_row + i, 1, s.adapter});
      } else {
        batch.sequences.push_back({&s.blocks, first_row, n, s.adapter});
      }
      if (decoding) {  // every row: each picks a token once the rows before it are confirmed
        for (std::uint32_t i = 0; i < n; ++i) {
          batch.output_rows.push_back(first_row + i);
          output_requests.push_back(&r);
        }
      } else if (r.prompt_done + n == r.prompt.size()) {  // the row whose logits pick a token
        batch.output_rows.push_back(first_row + n - 1);
        output_requests.push_back(&r);
      }
    }
  }
}

}  // namespace lpx::core
