// The engine thread: waits for work, admits what fits, and runs steps. A step plans its batch
// (Scheduler), runs the forward pass and picks a token per output row (on the host or the
// device), records the positions computed, and hands each token to TokenOutput.
#include "engine/engine.hpp"

#include "engine/ngram_draft.hpp"

#include <algorithm>
#include <exception>
#include <new>

namespace lpx::core {

void Engine::loop() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      // A queued step is collected even when its requests have all ended since.
      wake_.wait(lock, [&] { return stopping_ || scheduler_->has_work() || queued_; });
      if (stopping_) scheduler_->cancel_all();
      // Cancelled waiting requests end in the next step; the rest are admitted while they fit.
      scheduler_->admit_waiting();
      if (stopping_ && scheduler_->nothing_running() && !queued_) return;
    }
    step();
  }
}

Engine::TokenPick Engine::token_pick() const {
  const auto every_row = [&](auto&& ok) {
    return std::all_of(batch_requests_.begin(), batch_requests_.end(),
                       [&](const Request* r) { return !r->logprobs && ok(*r->sampler); });
  };
  if (!forward_->has_device_argmax()) return TokenPick::host;
  if (every_row([](const SamplerChain& s) { return s.is_plain_greedy(); })) {
    return TokenPick::device_greedy;
  }
  if (forward_->has_device_sampling() &&
      every_row([](const SamplerChain& s) { return s.has_program(); })) {
    return TokenPick::device_program;
  }
  return TokenPick::host;
}

void Engine::step() {
  // Requests cancelled since the last step end before any work is done for them (a queued
  // step's row of theirs is computed in vain).
  for (auto& owned : scheduler_->running()) {
    if (!owned->admission_error.empty()) {
      finish(*owned, {LPX_FINISH_ERROR, owned->admission_error, LPX_ERR_RESOURCE_EXHAUSTED});
    } else if (owned->cancel) {
      finish(*owned, {LPX_FINISH_CANCELLED});
    }
  }
  drop_finished();
  if (queued_) {  // the step queued behind the last one (engine_queued_step.cpp)
    advance_queue();
    return;
  }
  if (config_.max_draft > 0) draft_tokens();  // host picks only: create() refuses device models
  scheduler_->plan(batch_, batch_requests_);
  if (batch_.rows() == 0) return;
  pick_ = token_pick();
  if (queues_batch()) {
    if (queue_batch()) advance_queue();
    return;
  }
  try {
    if (pick_ == TokenPick::host) {
      forward_->run(batch_, logits_.data());
    } else if (pick_ == TokenPick::device_greedy) {
      forward_->pick_tokens(batch_, nullptr, picked_tokens_.data());
    } else {
      next_programs(batch_requests_, programs_);
      forward_->pick_tokens(batch_, programs_.data(), picked_tokens_.data());
    }
  } catch (const std::exception& e) {
    // A kernel failed: every request in the batch ends with the error and its code; the cache
    // rows they wrote are discarded with them.
    const lpx_status_code code = status_code_of(e);
    for (const BatchSequence& bs : batch_.sequences) {
      for (auto& owned : scheduler_->running()) {
        if (owned->sequence != nullptr && &owned->sequence->blocks == bs.blocks) {
          finish(*owned, {LPX_FINISH_ERROR, e.what(), code});
        }
      }
    }
    drop_finished();
    return;
  }
  // Record what the step computed, then sample where logits came out.
  for (auto& owned : scheduler_->running()) {
    Request& r = *owned;
    for (const BatchSequence& bs : batch_.sequences) {
      if (bs.blocks != &r.sequence->blocks) continue;
      if (r.decoding()) {
        // Its next token; drafts (its later one-row runs) are recorded as the model confirms
        // them (below).
        record_decoded(r, batch_.tokens[bs.first_row]);
        break;
      }
      record_prompt_rows(r, batch_.tokens.data() + bs.first_row, bs.n_rows);
    }
  }
  steps_.fetch_add(1, std::memory_order_relaxed);
  after_step();
  deliver_picks();
  drop_finished();
}

void Engine::record_decoded(Request& r, std::int32_t token) {
  r.sequence->decoded_from = std::min(r.sequence->decoded_from, r.sequence->tokens.size());
  r.sequence->tokens.push_back(token);
}

void Engine::record_prompt_rows(Request& r, const std::int32_t* tokens, std::uint32_t n) {
  r.sequence->tokens.insert(r.sequence->tokens.end(), tokens, tokens + n);
  if (r.prompt_done < r.prompt.size()) {
    r.prompt_done += n;
    prompt_tokens_computed_.fetch_add(n, std::memory_order_relaxed);
  }
}

void Engine::after_step() {
  // Prompt blocks the step filled serve later prompts (before any window gives them back).
  for (auto& owned : scheduler_->running()) publish(*owned);
  if (config_.kv_window > 0) {
    std::lock_guard lock(mutex_);  // the cache's free list changes under mutex_ only
    for (auto& owned : scheduler_->running()) scheduler_->drop_out_of_window(*owned);
  }
}

void Engine::next_programs(const std::vector<Request*>& requests,
                           std::vector<lpx_sampling_program>& programs) {
  for (std::size_t o = 0; o < requests.size(); ++o) {
    Request& r = *requests[o];
    if (r.drawn_program) {  // drawn for a step that never ran: the draws stay in order
      programs[o] = *r.drawn_program;
      r.drawn_program.reset();
    } else {
      r.sampler->next_program(programs[o]);
    }
  }
}

void Engine::deliver_picks() {
  // Each request's output rows: its next token's, then one per draft. A row's token is picked
  // as without drafts (the same chain, the same draws); the next row counts only while each
  // pick equals the draft fed after it, since a row saw the drafts before it as its past.
  for (std::size_t o = 0; o < batch_requests_.size();) {
    if (batch_requests_[o] == nullptr) {  // a queued step's row of a request that ended
      ++o;
      continue;
    }
    Request& r = *batch_requests_[o];
    std::size_t rows = 1;
    while (o + rows < batch_requests_.size() && batch_requests_[o + rows] == &r) ++rows;
    std::size_t confirmed = 0;  // drafts the model confirmed
    try {
      for (std::size_t i = 0; i < rows; ++i) {
        if (i > 0) {
          r.sequence->tokens.push_back(r.draft[i - 1]);  // its K/V, computed this step, holds
          ++confirmed;
        }
        const bool on_host = pick_ == TokenPick::host;
        const float* logits = on_host ? logits_.data() + (o + i) * h_.n_vocab : nullptr;
        const std::int32_t token =
            on_host ? r.sampler->sample(logits, r.tokens_left()) : picked_tokens_[o + i];
        r.sampler->accept(token);
        tokens_generated_.fetch_add(1, std::memory_order_relaxed);
        if (auto ending = output_->deliver(r, token, logits)) {
          // The pick that ends the answer may still be the draft fed after it (an
          // end-of-generation token the draft guessed): confirmed, though nothing follows.
          if (i + 1 < rows && token == r.draft[i]) ++confirmed;
          finish(r, *ending);
          break;
        }
        if (r.cancel || i + 1 == rows || token != r.draft[i]) break;
      }
    } catch (const std::exception& e) {
      finish(r, {LPX_FINISH_ERROR, e.what()});
    }
    r.drafts_verified += static_cast<std::uint32_t>(rows - 1);
    r.drafts_accepted += static_cast<std::uint32_t>(confirmed);
    draft_tokens_.fetch_add(rows - 1, std::memory_order_relaxed);
    accepted_tokens_.fetch_add(confirmed, std::memory_order_relaxed);
    o += rows;
  }
}

void Engine::drop_finished() {
  // A queued step's rows of requests that ended are forgotten before the requests go.
  for (auto* requests : {&batch_requests_, &next_requests_}) {
    for (Request*& r : *requests) {
      if (r != nullptr && r->sequence == nullptr) r = nullptr;
    }
  }
  std::lock_guard lock(mutex_);
  scheduler_->drop_finished();
}

void Engine::publish(Request& r) {
  if (!config_.prefix_cache || r.sequence == nullptr) return;
  std::lock_guard lock(mutex_);  // the index is read by stats() under mutex_
  scheduler_->publish(r);
}

void Engine::draft_tokens() {
  draft_jobs_.clear();
  for (auto& owned : scheduler_->running()) {
    Request& r = *owned;
    r.draft.clear();
    if (r.sequence == nullptr || r.cancel || !r.decoding()) continue;
    // Room for the drafts: the positions the request reserved beyond its next token, and no
    // more tokens than it may still generate after it.
    const std::uint32_t left = r.tokens_left();
    if (left <= 1 || ends_generation(r, r.next_token)) continue;
    const std::uint32_t room = std::min(config_.max_draft, left - 1);
    if (draft_model_) {
      draft_jobs_.push_back({&r.draft_state, &r.sequence->tokens, r.next_token, room, r.prompt.size(), &r.draft});
    } else {
      ngram_draft(r.sequence->tokens, r.next_token, config_.ngram, room, r.draft);
    }
  }
  if (!draft_jobs_.empty()) draft_with_model();
  // Nothing follows the end of an answer: a draft stops at its first end-of-generation token
  // (kept, for the model to confirm), so no row is spent guessing past it.
  for (auto& owned : scheduler_->running()) {
    Request& r = *owned;
    const auto end = std::find_if(r.draft.begin(), r.draft.end(), [&](std::int32_t t) { return ends_generation(r, t); });
    if (end != r.draft.end()) r.draft.erase(end + 1, r.draft.end());
  }
}

bool Engine::ends_generation(const Request& r, std::int32_t token) const {
  return !r.ignore_end_of_generation && parts_.tokenizer->is_end_of_generation(token);
}

void Engine::draft_with_model() {
  try {
    // A draft cache catching up with a prompt takes at most the rows a prompt may take in a
    // step while others decode, so that it stalls no one else's stream.
    const bool alone = scheduler_->running().size() == 1;
    draft_model_->draft(draft_jobs_, alone ? config_.batch_tokens : config_.prefill_tokens_while_decoding);
  } catch (const std::exception& e) {
    // A kernel of the draft failed: the requests it drafted for end with the error, as a
    // failing step's do.
    const lpx_status_code code = status_code_of(e);
    const std::string error = std::string("draft model: ") + e.what();
    for (auto& owned : scheduler_->running()) {
      const bool drafted = std::any_of(draft_jobs_.begin(), draft_jobs_.end(),
                                       [&](const DraftJob& job) { return job.state == &owned->draft_state; });
      if (drafted && owned->sequence != nullptr) finish(*owned, {LPX_FINISH_ERROR, error, code});
    }
    drop_finished();
  }
}

void Engine::finish(Request& r, const Ending& ending) {
  {
    // The cache and the session first: a client may send its session's next turn as soon as
    // on_done tells it this one is over (from the callback itself), and must not be refused
    // as busy.
    std::lock_guard lock(mutex_);
    scheduler_->release(r);
  }
  if (draft_model_) draft_model_->release(r.draft_state);
  output_->report(r, ending);
  r.decoder.reset();
  std::lock_guard lock(mutex_);
  live_.erase(r.id);
  finished_.notify_all();
}


}  // namespace lpx::core
