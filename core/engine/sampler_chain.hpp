// One sequence's sampler chain: the chain's plugin instances, a state per stateful link, and the
// candidate buffer. sample() turns a row of logits into a token: logit bias first, then every
// link's apply in order; the last link selects.
//
// A chain whose links all describe themselves as standard operations (and no logit bias) is
// also a sampling program (lpx/kinds/sampling_program.h): a device backend can then pick the
// token next to the logits, with the draw the chain's dist link would have made.
//
// Threading: one sequence, one thread at a time. sample() and accept() do not allocate.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "lpx/kinds/sampler.h"
#include "plugin_host/plugin_library.hpp"

namespace lpx::core {

struct LogitBias {
  std::int32_t token;
  float bias;
};

class SamplerChain {
 public:
  // Makes the per-sequence states of `links` seeded with `seed`. Throws EngineError when a
  // plugin cannot make its state.
  SamplerChain(std::vector<std::shared_ptr<PluginInstance>> links, std::uint64_t seed,
               std::uint32_t n_vocab, std::vector<LogitBias> bias);
  ~SamplerChain();
  SamplerChain(const SamplerChain&) = delete;
  SamplerChain& operator=(const SamplerChain&) = delete;

  // The chosen token. Throws EngineError when a link fails or nothing was selected.
  // `tokens_left`: what the request may still generate, this token included (0: unknown);
  // links read it as lpx_candidates.tokens_left.
  std::int32_t sample(const float* logits, std::uint32_t tokens_left = 0);
  // Tells every link which token the sequence took.
  void accept(std::int32_t token);
  // True when sample() is the argmax of the raw logits (the lone `greedy` link, no logit bias):
  // a device backend may then pick the token itself and send back only its id.
  bool is_plain_greedy() const noexcept { return plain_greedy_; }
  // True when the chain is a sampling program.
  bool has_program() const noexcept { return program_.n_ops > 0; }
  // This step's program: the chain's operations and the uniform its dist link would draw now
  // (its generator advances exactly as in sample()). Only when has_program(). Throws
  // EngineError when the dist link breaks its contract.
  void next_program(lpx_sampling_program& out);

 private:
  struct Link {
    std::shared_ptr<PluginInstance> instance;
    const lpx_sampler_api* api;
    lpx_sampler_state* state;
  };
  void describe_program();  // fills program_ when every link is a standard operation
  std::vector<Link> links_;
  std::vector<lpx_token_candidate> candidates_;
  std::vector<LogitBias> bias_;
  bool plain_greedy_ = false;
  lpx_sampling_program program_{};  // n_ops = 0: not a program
  Link* draw_link_ = nullptr;       // the dist link whose generator gives the program's uniform
};

}  // namespace lpx::core
