// Each step: admission of waiting requests against the KV cache (and eviction of idle
// sessions' caches), the batch of decode rows and prefill chunks, where tokens are picked, and
// the forward pass.
#include "engine/engine_internals.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>
#include <set>

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include "engine/engine_error.hpp"
#include "model/model_validation.hpp"
#include "lpx/cpp/status.hpp"
#include "lpx/cpp/utf8.hpp"

namespace lpx::core {

bool Engine::admit(Request& r) {
  Sequence* sequence = nullptr;
  if (r.session != 0) {
    Sequence& s = sessions_.at(r.session)->sequence;
    // Reuse the longest common prefix, but recompute at least the last prompt token: its logits
    // are needed.
    std::size_t common = 0;
    const std::size_t limit = std::min(s.tokens.size(), r.prompt.size() - 1);
    while (common < limit && s.tokens[common] == r.prompt[common]) ++common;
    s.tokens.resize(common);
    cache_->truncate(s.blocks, static_cast<std::uint32_t>(common));
    sequence = &s;
  } else {
    r.own_sequence = std::make_unique<Sequence>();
    r.own_sequence->blocks = BlockTable(config_.context_size, config_.block_size);
    r.own_sequence->tokens.reserve(r.positions_needed);
    sequence = r.own_sequence.get();
  }
  if (!cache_->ensure(sequence->blocks, r.positions_needed)) {
    r.own_sequence.reset();
    return false;
  }
  r.sequence = sequence;
  r.cached = static_cast<std::uint32_t>(sequence->tokens.size());
  r.prompt_done = r.cached;
  return true;
}

void Engine::evict_idle_sessions() {
  for (auto& [id, session] : sessions_) {
    if (session->busy) continue;
    session->sequence.tokens.clear();
    cache_->release(session->sequence.blocks);
  }
}

void Engine::build_batch() {
  batch_.clear();
  batch_requests_.clear();
  std::uint32_t budget = config_.batch_tokens;
  // Decoding sequences first (one row each): they are latency-bound; prefill fills the rest, up
  // to prefill_tokens_while_decoding when anything decodes.
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1 && batch_.rows() > 0) {
      budget = std::min(budget, config_.prefill_tokens_while_decoding);
    }
    for (auto& owned : running_) {
      Request& r = *owned;
      if (r.cancel || budget == 0) continue;
      const bool decoding = r.prompt_done == r.prompt.size();
      if (decoding != (pass == 0)) continue;
      Sequence& s = *r.sequence;
      const auto first_row = batch_.rows();
      const auto first_position = static_cast<std::uint32_t>(s.tokens.size());
      std::uint32_t n = 1;
      if (decoding) {
        batch_.tokens.push_back(r.next_token);
        batch_.positions.push_back(static_cast<std::int32_t>(first_position));
      } else {
        n = std::min<std::uint32_t>(budget, static_cast<std::uint32_t>(r.prompt.size()) - r.prompt_done);
        for (std::uint32_t i = 0; i < n; ++i) {
          batch_.tokens.push_back(r.prompt[r.prompt_done + i]);
          batch_.positions.push_back(static_cast<std::int32_t>(first_position + i));
        }
      }
      budget -= n;
      batch_.sequences.push_back({&s.blocks, first_row, n});
      const bool wants_logits = decoding || r.prompt_done + n == r.prompt.size();
      if (wants_logits) {
        batch_.output_rows.push_back(first_row + n - 1);
        batch_requests_.push_back(&r);
      }
    }
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
  // Requests cancelled since the last step end before any work is done for them.
  for (auto& owned : running_) {
    if (!owned->admission_error.empty()) {
      finish(*owned, LPX_FINISH_ERROR, owned->admission_error, LPX_ERR_RESOURCE_EXHAUSTED);
    } else if (owned->cancel) {
      finish(*owned, LPX_FINISH_CANCELLED);
    }
  }
  {
    std::lock_guard lock(mutex_);
    std::erase_if(running_, [](const std::unique_ptr<Request>& r) { return r->sequence == nullptr; });
  }
  build_batch();
  if (batch_.rows() == 0) return;
  const TokenPick pick = token_pick();
  try {
    if (pick == TokenPick::host) {
      forward_->run(batch_, logits_.data());
    } else if (pick == TokenPick::device_greedy) {
      forward_->pick_tokens(batch_, nullptr, picked_tokens_.data());
    } else {
      for (std::size_t o = 0; o < batch_requests_.size(); ++o) {
        batch_requests_[o]->sampler->next_program(programs_[o]);
      }
      forward_->pick_tokens(batch_, programs_.data(), picked_tokens_.data());
    }
  } catch (const std::exception& e) {
    // A kernel failed: every request in the batch ends with the error; the cache rows they
    // wrote are discarded with them.
    for (const BatchSequence& bs : batch_.sequences) {
      for (auto& owned : running_) {
        if (owned->sequence != nullptr && &owned->sequence->blocks == bs.blocks) {
          finish(*owned, LPX_FINISH_ERROR, e.what());
        }
      }
    }
    std::lock_guard lock(mutex_);
    std::erase_if(running_, [](const std::unique_ptr<Request>& r) { return r->sequence == nullptr; });
    return;
  }
  // Record what the step computed, then sample where logits came out.
  for (auto& owned : running_) {
    Request& r = *owned;
    for (const BatchSequence& bs : batch_.sequences) {
      if (bs.blocks != &r.sequence->blocks) continue;
      for (std::uint32_t i = 0; i < bs.n_rows; ++i) r.sequence->tokens.push_back(batch_.tokens[bs.first_row + i]);
      if (r.prompt_done < r.prompt.size()) {
        r.prompt_done += bs.n_rows;
        prompt_tokens_computed_.fetch_add(bs.n_rows, std::memory_order_relaxed);
      }
    }
  }
  steps_.fetch_add(1, std::memory_order_relaxed);
  for (std::size_t o = 0; o < batch_requests_.size(); ++o) {
    Request& r = *batch_requests_[o];
    try {
      const bool on_host = pick == TokenPick::host;
      const float* logits = on_host ? logits_.data() + o * h_.n_vocab : nullptr;
      const std::int32_t token = on_host ? r.sampler->sample(logits) : picked_tokens_[o];
      r.sampler->accept(token);
      tokens_generated_.fetch_add(1, std::memory_order_relaxed);
      deliver(r, token, logits);
    } catch (const std::exception& e) {
      finish(r, LPX_FINISH_ERROR, e.what());
    }
  }
  std::lock_guard lock(mutex_);
  std::erase_if(running_, [](const std::unique_ptr<Request>& r) { return r->sequence == nullptr; });
}

}  // namespace lpx::core
