// The engine's first stage: turns a caller's lpx_request into a Request the scheduler can run,
// or refuses it with a Status naming the field at fault. Everything that can be checked without
// the engine's state is checked here, on the submitting thread, before anything is queued.
//
// Threading: const and stateless after construction; any thread may call it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chat_template/chat_template.hpp"
#include "engine/draft_model.hpp"
#include "engine/engine_config.hpp"
#include "engine/kv_cache.hpp"
#include "engine/request.hpp"
#include "engine/sampler_chain_factory.hpp"
#include "lpx/engine.h"
#include "tokenizer/tokenizer.hpp"
#include "util/expected.hpp"

namespace lpx::core {

class RequestIntake {
 public:
  // Every reference must outlive the intake (the engine owns them all). `chat_template` may be
  // NULL (a model without one: chat requests are refused); its origin names it in errors.
  // `draft_model` (speculative decoding's, or NULL) sizes each request's state in it.
  RequestIntake(const Tokenizer& tokenizer, const ChatTemplate* chat_template,
                std::string chat_template_origin, SamplerChainFactory& samplers,
                const KvCache& cache, const EngineConfig& config, std::uint32_t n_vocab,
                const DraftModel* draft_model,
                const std::vector<std::unique_ptr<ResidentAdapter>>& adapters);

  // The prompt tokens of `request` as the engine would run them: its prompt_tokens, its prompt
  // encoded, or its messages rendered by the chat template and encoded.
  Expected<std::vector<std::int32_t>> prompt_tokens(const lpx_request& request) const;

  // A checked request with its sampler chain, stops and decoder, not yet queued (id 0).
  Expected<std::unique_ptr<Request>> prepare(const lpx_request& request) const;

 private:
  const Tokenizer& tokenizer_;
  const ChatTemplate* chat_template_;
  std::string chat_template_origin_;
  SamplerChainFactory& samplers_;
  const KvCache& cache_;
  const EngineConfig& config_;
  std::uint32_t n_vocab_;
  const DraftModel* draft_model_;
  const std::vector<std::unique_ptr<ResidentAdapter>>& adapters_;
};

}  // namespace lpx::core
