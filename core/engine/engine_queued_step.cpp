// The engine thread's queued steps (EngineConfig::overlap_steps). On a device whose backend
// queues steps (ABI 2.8, model_enqueue), a step whose every row is a sequence's one row with
// its token picked on the device is queued; the step after it (the same sequences, each one
// position on) is queued behind it before the host reads its picks, its tokens taken from
// those picks on the device. The device runs step N + 1 while the host streams step N's
// tokens, so it never waits for the host between steps.
//
// The price: a sequence that ends at step N (end of generation, a stop string, a cancel) has
// had its row of N + 1 computed in vain. That row wrote K/V at a position the sequence had
// reserved and holds no token for, so nothing reads it: a later step that uses the slot (the
// session's next turn, another sequence given the block) runs after it on the device, and
// writes the slot before reading it.
#include "engine/engine.hpp"

#include <utility>

#include <spdlog/spdlog.h>

namespace lpx::core {

bool Engine::queues_batch() const {
  if (!config_.overlap_steps || pick_ == TokenPick::host || !forward_->can_queue()) return false;
  // Row o, its sequence's only row, is output o: request o's (no drafts on a device).
  const std::uint32_t rows = batch_.rows();
  return config_.max_draft == 0 && batch_.sequences.size() == rows &&
         batch_.output_rows.size() == rows;
}

bool Engine::queue_batch() {
  try {
    const lpx_sampling_program* programs = nullptr;
    if (pick_ == TokenPick::device_program) {
      next_programs(batch_requests_, programs_);
      programs = programs_.data();
    }
    forward_->queue_picks(batch_, programs, nullptr, picked_tokens_.data());
  } catch (const std::exception& e) {
    fail_queued(e);
    drop_finished();
    return false;
  }
  queued_ = true;
  return true;
}

bool Engine::successor_may_follow() const {
  // Only the same rows one position on: nothing else running, nothing waiting that could be
  // admitted (it wants its prefill in the next step), nothing cancelled, and a row is only
  // worth queueing when the pick before it is not the request's last (max_tokens), which also
  // keeps it inside the positions the request reserved.
  if (batch_requests_.size() != scheduler_->running().size()) return false;
  for (const Request* r : batch_requests_) {
    if (r == nullptr || r->cancel || r->tokens_left() < 2) return false;
  }
  std::lock_guard lock(mutex_);
  return scheduler_->waiting_count() == 0 || scheduler_->admission_blocked();
}

void Engine::advance_queue() {
  bool successor = false;
  if (successor_may_follow()) {
    next_batch_.clear();
    next_requests_.assign(batch_requests_.begin(), batch_requests_.end());
    for (std::uint32_t o = 0; o < batch_.rows(); ++o) {
      next_batch_.tokens.push_back(-1);  // batch_'s pick, taken on the device; set once read
      next_batch_.positions.push_back(batch_.positions[o] + 1);
      BatchSequence sequence = batch_.sequences[o];
      sequence.first_row = o;
      next_batch_.sequences.push_back(sequence);
      next_batch_.output_rows.push_back(o);
      previous_outputs_[o] = static_cast<std::int32_t>(o);
    }
    bool drawn = false;  // next_programs_ holds a draw for every row
    try {
      const lpx_sampling_program* programs = nullptr;
      if (pick_ == TokenPick::device_program) {
        next_programs(next_requests_, next_programs_);
        drawn = true;
        programs = next_programs_.data();
      }
      forward_->queue_picks(next_batch_, programs, previous_outputs_.data(), next_picks_.data());
      successor = true;
      steps_queued_behind_.fetch_add(1, std::memory_order_relaxed);
    } catch (const std::exception& e) {
      // Nothing was queued (a failing model_enqueue queues nothing): batch_ is collected as
      // usual and the successor's rows run in the next step, unqueued, with the draws taken
      // for them; a failure that is the step's own shows there.
      spdlog::warn("engine: queueing a step behind the last one failed ({}); its rows run in "
                   "the next step",
                   e.what());
      if (drawn) {  // (a sampler whose draw failed fails again in the next step)
        for (std::size_t o = 0; o < next_requests_.size(); ++o) {
          next_requests_[o]->drawn_program = next_programs_[o];
        }
      }
    }
  }
  collect_queued(successor);
}

void Engine::collect_queued(bool successor) {
  try {
    forward_->collect();
  } catch (const std::exception& e) {
    fail_queued(e);
    if (successor) {
      try {
        forward_->collect();  // it fails too (its tokens were the failed step's picks)
      } catch (const std::exception&) {  // its requests are the ones just ended
      }
    }
    queued_ = false;
    drop_finished();
    return;
  }
  for (std::size_t o = 0; o < batch_requests_.size(); ++o) {
    Request* r = batch_requests_[o];
    if (r == nullptr) continue;  // it ended after the step was queued: the row is discarded
    if (r->decoding()) {
      record_decoded(*r, batch_.tokens[o]);
    } else {  // its last prompt row, whose pick is its first token
      record_prompt_rows(*r, &batch_.tokens[o], 1);
    }
  }
  steps_.fetch_add(1, std::memory_order_relaxed);
  after_step();
  deliver_picks();
  queued_ = successor;
  if (successor) {
    // The successor becomes the queued step; its tokens, batch_'s picks, are known now.
    for (std::size_t o = 0; o < next_requests_.size(); ++o) {
      next_batch_.tokens[o] = picked_tokens_[o];
    }
    std::swap(batch_, next_batch_);
    std::swap(batch_requests_, next_requests_);
    std::swap(picked_tokens_, next_picks_);  // the buffer the successor's picks go to
  }
  drop_finished();  // forgets the rows of requests that ended, then lets them go
}

void Engine::fail_queued(const std::exception& e) {
  const lpx_status_code code = status_code_of(e);
  for (Request* r : batch_requests_) {
    if (r != nullptr && r->sequence != nullptr) finish(*r, {LPX_FINISH_ERROR, e.what(), code});
  }
}

}  // namespace lpx::core
