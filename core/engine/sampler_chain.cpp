#include "engine/sampler_chain.hpp"

#include "engine/engine_error.hpp"
#include "reference/sampling_program.hpp"

namespace lpx::core {

SamplerChain::SamplerChain(std::vector<std::shared_ptr<PluginInstance>> links,
                           std::uint64_t seed, std::uint32_t n_vocab, std::vector<LogitBias> bias)
    : candidates_(n_vocab), bias_(std::move(bias)) {
  links_.reserve(links.size());
  for (auto& instance : links) {
    const auto& api = instance->api<lpx_sampler_api>();
    lpx_sampler_state* state = nullptr;
    if (api.state_create != nullptr) {
      if (lpx_status* status = api.state_create(instance->raw(), seed, &state)) {
        const std::string name = instance->library().description().name;
        for (Link& made : links_) {
          if (made.state) made.api->state_destroy(made.state);
        }
        const Status failure = take_status(status);
        throw EngineError("sampler '" + name + "': " + failure.message, failure.code);
      }
    }
    links_.push_back({std::move(instance), &api, state});
  }
  describe_program();
  plain_greedy_ = program_.n_ops == 1 && program_.ops[0].kind == LPX_SAMPLING_GREEDY;
}

void SamplerChain::describe_program() {
  if (!bias_.empty() || links_.empty() || links_.size() > LPX_SAMPLING_MAX_OPS) return;
  lpx_sampling_program program{};
  for (Link& link : links_) {
    lpx_sampling_op& op = program.ops[program.n_ops++];
    if (link.api->standard_op == nullptr || link.api->standard_op(link.instance->raw(), &op) != 1) {
      return;
    }
    if (op.kind == LPX_SAMPLING_DIST) {
      if (link.api->draw_uniform == nullptr || link.state == nullptr) return;
      draw_link_ = &link;
    }
  }
  if (!reference::check_sampling_program(program).empty()) {
    draw_link_ = nullptr;
    return;
  }
  program_ = program;
}

void SamplerChain::next_program(lpx_sampling_program& out) {
  out = program_;
  if (draw_link_ != nullptr) {
    const double u = draw_link_->api->draw_uniform(draw_link_->instance->raw(), draw_link_->state);
    if (!(u >= 0 && u < 1)) {
      throw EngineError("sampler '" + draw_link_->instance->library().description().name +
                        "' drew " + std::to_string(u) + ", outside [0, 1)");
    }
    out.uniform = u;
  }
}

SamplerChain::~SamplerChain() {
  for (Link& link : links_) {
    if (link.state != nullptr && link.api->state_destroy != nullptr) {
      link.api->state_destroy(link.state);
    }
  }
}

std::int32_t SamplerChain::sample(const float* logits, std::uint32_t tokens_left) {
  const std::size_t n = candidates_.size();
  for (std::size_t i = 0; i < n; ++i) {
    candidates_[i] = {static_cast<std::int32_t>(i), logits[i], 0.0f};
  }
  for (const LogitBias& b : bias_) candidates_[static_cast<std::size_t>(b.token)].logit += b.bias;
  lpx_candidates view{candidates_.data(), n, -1, 0, 0, tokens_left};
  for (Link& link : links_) {
    view.selected = -1;
    if (lpx_status* status = link.api->apply(link.instance->raw(), link.state, &view)) {
      throw EngineError("sampler '" + link.instance->library().description().name +
                        "': " + take_status_message(status));
    }
    if (view.size > n) {
      throw EngineError("sampler '" + link.instance->library().description().name +
                        "' grew the candidate list");
    }
  }
  if (view.selected < 0 || static_cast<std::size_t>(view.selected) >= view.size) {
    throw EngineError("the sampler chain selected no token (its last link must select)");
  }
  return view.data[view.selected].id;
}

void SamplerChain::accept(std::int32_t token) {
  for (Link& link : links_) {
    if (link.api->accept != nullptr) link.api->accept(link.instance->raw(), link.state, token);
  }
}

}  // namespace lpx::core
