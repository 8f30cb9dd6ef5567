// Requests in: a caller's lpx_request checked field by field and turned into what the engine
// runs (prompt tokens, a sampler chain, stop strings, a decoder) before it is queued. Refusals
// carry their status code and the request field at fault.
#include "engine/request_intake.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>

#include <boost/json.hpp>

#include "engine/engine_error.hpp"
#include "lpx/cpp/utf8.hpp"

namespace lpx::core {

namespace {

std::uint32_t clamp_u32(std::uint64_t v) {
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(v, UINT32_MAX));
}

Expected<bool> check_utf8(const char* text, const char* what) {
  if (!utf8::is_well_formed(text)) return invalid_argument(std::string(what) + " is not valid UTF-8");
  return true;
}

// The conversation of lpx_request.messages_json: an array of message objects, each with a string
// role; content a string, null or text parts (joined); the tool fields kept for the template.
Expected<boost::json::array> json_messages(const char* text) {
  if (auto ok = check_utf8(text, "messages_json"); !ok) return unexpected(ok.error());
  boost::system::error_code error;
  boost::json::value value = boost::json::parse(text, error);
  if (error || !value.is_array() || value.as_array().empty()) {
    return invalid_argument(std::string("messages_json must be a non-empty JSON array of messages"), "messages");
  }
  for (std::size_t i = 0; i < value.as_array().size(); ++i) {
    boost::json::value& item = value.as_array()[i];
    boost::json::object* m = item.if_object();
    const boost::json::value* role = m ? m->if_contains("role") : nullptr;
    if (role == nullptr || !role->is_string()) {
      return invalid_argument("message " + std::to_string(i) + " has no role", "messages");
    }
    boost::json::value* content = m->if_contains("content");
    if (content != nullptr && content->is_array()) {  // text parts, as one string
      std::string joined;
      for (const boost::json::value& part : content->as_array()) {
        const boost::json::object* p = part.if_object();
        const boost::json::value* t = p ? p->if_contains("text") : nullptr;
        if (t == nullptr || !t->is_string()) {
          return invalid_argument("message " + std::to_string(i) + ": only text content parts are supported",
                                  "messages");
        }
        joined += t->as_string();
      }
      *content = boost::json::string(joined);
    } else if (content == nullptr) {
      (*m)["content"] = nullptr;  // templates test it: present and null
    } else if (!content->is_string() && !content->is_null()) {
      return invalid_argument("message " + std::to_string(i) + " has a content that is not text", "messages");
    }
    // OpenAI sends a call's arguments as JSON text; templates render them as an object
    // (`arguments | tojson`), as transformers and vLLM pass them.
    if (boost::json::value* calls = m->if_contains("tool_calls"); calls != nullptr && calls->is_array()) {
      for (boost::json::value& call : calls->as_array()) {
        boost::json::value* function = call.is_object() ? call.as_object().if_contains("function") : nullptr;
        boost::json::value* arguments =
            function && function->is_object() ? function->as_object().if_contains("arguments") : nullptr;
        if (arguments == nullptr || !arguments->is_string()) continue;
        boost::system::error_code bad;
        boost::json::value parsed = boost::json::parse(arguments->as_string(), bad);
        if (bad || !parsed.is_object()) {
          return invalid_argument("message " + std::to_string(i) +
                                      ": a tool call's arguments are not a JSON object",
                                  "messages");
        }
        *arguments = std::move(parsed);
      }
    }
  }
  return std::move(value.as_array());
}

// The tools of lpx_request.tools_json: an array of objects.
Expected<boost::json::array> json_tools(const char* text) {
  if (auto ok = check_utf8(text, "tools_json"); !ok) return unexpected(std::move(ok).error().about("tools"));
  boost::system::error_code error;
  boost::json::value value = boost::json::parse(text, error);
  if (error || !value.is_array()) {
    return invalid_argument(std::string("tools_json must be a JSON array of tool definitions"), "tools");
  }
  for (const boost::json::value& tool : value.as_array()) {
    if (!tool.is_object()) return invalid_argument(std::string("every tool must be an object"), "tools");
  }
  return std::move(value.as_array());
}

}  // namespace

RequestIntake::RequestIntake(const Tokenizer& tokenizer, const ChatTemplate* chat_template,
                             std::string chat_template_origin, SamplerChainFactory& samplers,
                             const KvCache& cache, const EngineConfig& config, std::uint32_t n_vocab,
                             const DraftModel* draft_model,
                             const std::vector<std::unique_ptr<ResidentAdapter>>& adapters)
    : tokenizer_(tokenizer),
      chat_template_(chat_template),
      chat_template_origin_(std::move(chat_template_origin)),
      samplers_(samplers),
      cache_(cache),
      config_(config),
      n_vocab_(n_vocab),
      draft_model_(draft_model),
      adapters_(adapters) {}

Expected<std::vector<std::int32_t>> RequestIntake::prompt_tokens(const lpx_request& request) const {
  const bool has_prompt = request.prompt != nullptr;
  const bool has_messages = request.messages != nullptr || request.message_count != 0 ||
                            request.messages_json != nullptr;
  if (request.messages_json != nullptr && (request.messages != nullptr || request.message_count != 0)) {
    return invalid_argument(std::string("a request gives its messages once: 'messages' or 'messages_json'"));
  }
  if (request.tools_json != nullptr && !has_messages) {
    return invalid_argument(std::string("tools need messages (a chat)"), "tools");
  }
  const bool has_tokens = request.prompt_tokens != nullptr || request.prompt_token_count != 0;
  if (int{has_prompt} + int{has_messages} + int{has_tokens} != 1) {
    return invalid_argument(
        std::string("a request needs exactly one of 'prompt', 'messages' and 'prompt_tokens'"));
  }
  const Tokenizer& tokenizer = tokenizer_;
  if (has_tokens) {
    if (request.prompt_tokens == nullptr) return invalid_argument(std::string("prompt_tokens is NULL"));
    std::vector<std::int32_t> tokens(request.prompt_tokens,
                                     request.prompt_tokens + request.prompt_token_count);
    for (std::int32_t t : tokens) {
      if (t < 0 || t >= tokenizer.vocab_size()) {
        return invalid_argument("prompt token " + std::to_string(t) + " is not in the vocabulary (" +
                          std::to_string(tokenizer.vocab_size()) + " tokens)");
      }
    }
    return tokens;
  }
  if (has_prompt) {
    if (auto ok = check_utf8(request.prompt, "the prompt"); !ok) return unexpected(ok.error());
    Tokenizer::EncodeOptions options;
    options.add_eos = false;
    options.parse_special = (request.flags & LPX_REQUEST_PARSE_SPECIAL) != 0;
    return tokenizer.encode(request.prompt, options);
  }
  if (!chat_template_) {
    return invalid_argument("the model has no chat template (set [model] chat_template in the "
                      "pipeline to a Jinja file)");
  }
  boost::json::array messages;
  if (request.messages_json != nullptr) {
    auto parsed = json_messages(request.messages_json);
    if (!parsed) return unexpected(parsed.error());
    messages = std::move(*parsed);
  }
  for (std::size_t i = 0; i < request.message_count; ++i) {
    const lpx_chat_message& m = request.messages[i];
    if (m.role == nullptr || m.content == nullptr) {
      return invalid_argument("message " + std::to_string(i) + " has no role or content");
    }
    if (auto ok = check_utf8(m.content, "a message"); !ok) return unexpected(ok.error());
    messages.push_back(boost::json::object{{"role", m.role}, {"content", m.content}});
  }
  boost::json::object context{{"messages", std::move(messages)},
                              {"add_generation_prompt", true}};
  bool tools_offered = false;
  if (request.tools_json != nullptr) {
    auto tools = json_tools(request.tools_json);
    if (!tools) return unexpected(tools.error());
    tools_offered = !tools->empty();  // an empty list offers nothing, as no list does
    if (tools_offered) context["tools"] = std::move(*tools);
  }
  auto piece = [&](std::optional<std::int32_t> id) -> std::string {
    if (!id) return {};
    auto text = tokenizer.piece(*id, true);
    return text ? std::string(*text) : std::string{};
  };
  const std::string bos = piece(tokenizer.bos());
  context["bos_token"] = bos;
  context["eos_token"] = piece(tokenizer.eos());
  auto text = chat_template_->render(context);
  if (!text) return unexpected(text.error().with_context("chat template of " + chat_template_origin_));
  if (tools_offered) {
    // Offered tools must reach the model: a template that renders the same text without them
    // does not know tools (the caller may describe them in a system message instead).
    boost::json::object without = context;
    without.erase("tools");
    auto plain = chat_template_->render(without);
    if (plain && *plain == *text) {
      return unexpected(Status(LPX_ERR_UNSUPPORTED,
                               "the chat template of " + chat_template_origin_ + " renders no tools",
                               "tools"));
    }
  }
  Tokenizer::EncodeOptions options;
  options.parse_special = true;
  options.add_eos = false;
  // Templates that write the BOS themselves must not get a second one.
  options.add_bos = bos.empty() || text->compare(0, bos.size(), bos) != 0;
  return tokenizer.encode(*text, options);
}

Expected<std::unique_ptr<Request>> RequestIntake::prepare(const lpx_request& caller_request) const {
  // lpx_request appeared in ABI 1.2 and grew in 1.3; a smaller (older) request is copied into a
  // zeroed current one, so the fields it lacks read as 0.
  constexpr std::size_t kSize_1_2 = offsetof(lpx_request, logprobs);
  if (caller_request.struct_size < kSize_1_2) {
    return invalid_argument("request.struct_size is " + std::to_string(caller_request.struct_size) +
                   "; an lpx_request (ABI 1.2) has at least " + std::to_string(kSize_1_2) +
                   " bytes");
  }
  lpx_request request{};
  std::memcpy(&request, &caller_request,
              std::min<std::size_t>(caller_request.struct_size, sizeof(lpx_request)));
  if (request.top_logprobs > LPX_MAX_TOP_LOGPROBS) {
    return invalid_argument("top_logprobs is " + std::to_string(request.top_logprobs) + "; at most " +
                       std::to_string(LPX_MAX_TOP_LOGPROBS),
                   "top_logprobs");
  }
  if (request.on_done == nullptr) return invalid_argument("request.on_done is required");
  const ResidentAdapter* adapter = nullptr;
  if (request.adapter != nullptr && request.adapter[0] != '\0') {
    for (const auto& a : adapters_) {
      if (a->name() == request.adapter) adapter = a.get();
    }
    if (adapter == nullptr) {
      std::string names;
      for (const auto& a : adapters_) names += (names.empty() ? "" : ", ") + a->name();
      return unexpected(Status(LPX_ERR_NOT_FOUND,
                               "no LoRA adapter '" + std::string(request.adapter) + "' is loaded with this model (" +
                                   (names.empty() ? std::string("it has none") : "adapters: " + names) + ")",
                               "model"));
    }
  }
  // The request field its input came from, which the prompt's refusals are about.
  const char* input = request.messages != nullptr || request.message_count != 0 ||
                              request.messages_json != nullptr
                          ? "messages"
                          : "prompt";
  auto prompt = prompt_tokens(request);
  if (!prompt) {
    Status why = std::move(prompt).error();
    if (why.field == "tools") return unexpected(std::move(why));  // about the tools, not the input
    return unexpected(std::move(why).about(input));
  }
  if (prompt->empty()) return invalid_argument("the prompt is empty", input);
  const auto n_prompt = static_cast<std::uint64_t>(prompt->size());
  if (n_prompt >= config_.context_size) {
    return unexpected(Status(LPX_ERR_RESOURCE_EXHAUSTED,
                             "the prompt has " + std::to_string(n_prompt) +
                                 " tokens; the context holds " +
                                 std::to_string(config_.context_size) +
                                 " (prompt + at least 1 generated)",
                             input));
  }
  if (request.max_tokens != 0 && n_prompt + request.max_tokens > config_.context_size) {
    return unexpected(Status(LPX_ERR_RESOURCE_EXHAUSTED,
                             "prompt (" + std::to_string(n_prompt) + " tokens) + max_tokens (" +
                                 std::to_string(request.max_tokens) + ") exceeds the context (" +
                                 std::to_string(config_.context_size) + " tokens)",
                             "max_tokens"));
  }
  auto r = std::make_unique<Request>();
  r->adapter = adapter;
  r->prompt = std::move(*prompt);
  r->max_tokens = request.max_tokens;
  r->positions_needed = request.max_tokens != 0
                            ? clamp_u32(n_prompt + request.max_tokens)
                            : config_.context_size;
  std::vector<std::string> stops;
  for (std::size_t i = 0; i < request.stop_count; ++i) {
    if (request.stop[i] == nullptr) return invalid_argument("stop string " + std::to_string(i) + " is NULL", "stop");
    if (auto ok = check_utf8(request.stop[i], "a stop string"); !ok) return unexpected(std::move(ok).error().about("stop"));
    stops.emplace_back(request.stop[i]);
  }
  r->stops = StopMatcher(std::move(stops));

  const lpx_sampling_overrides* sampling = request.sampling;
  std::vector<LogitBias> bias;
  if (sampling != nullptr) {
    for (std::size_t i = 0; i < sampling->logit_bias_count; ++i) {
      const std::int32_t token = sampling->logit_bias_tokens[i];
      const float value = sampling->logit_bias_values[i];
      if (token < 0 || static_cast<std::uint32_t>(token) >= n_vocab_) {
        return invalid_argument("logit_bias: token " + std::to_string(token) + " is not in the vocabulary (" +
                           std::to_string(n_vocab_) + " tokens)",
                       "logit_bias");
      }
      if (std::isnan(value) || value == INFINITY) {
        return invalid_argument("logit_bias: the bias of token " + std::to_string(token) +
                           " must be a number or -infinity",
                       "logit_bias");
      }
      bias.push_back({token, value});
    }
  }
  auto links = samplers_.links(sampling);
  if (!links) return unexpected(links.error());  // with its code and field
  std::uint64_t seed = 0;
  if (sampling != nullptr && (sampling->set & LPX_SET_SEED)) {
    seed = sampling->seed;
  } else {
    seed = (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  }
  try {
    r->sampler = std::make_unique<SamplerChain>(std::move(*links), seed, n_vocab_, std::move(bias));
  } catch (const EngineError& e) {  // the chain the request asked for cannot be built
    return fail(e.code() == LPX_ERR_INTERNAL ? LPX_ERR_INVALID_ARGUMENT : e.code(), e.what());
  }
  r->decoder.emplace(tokenizer_);
  r->draft.reserve(config_.max_draft);  // drafting allocates nothing per step
  if (draft_model_ != nullptr) draft_model_->prepare_state(r->draft_state);
  r->logprobs = request.logprobs != 0 || request.top_logprobs != 0;
  r->top.resize(request.top_logprobs);
  r->context_end_is_length = (request.flags & LPX_REQUEST_CONTEXT_END_IS_LENGTH) != 0;
  r->ignore_end_of_generation = (request.flags & LPX_REQUEST_IGNORE_END_OF_GENERATION) != 0;
  r->user = request.user;
  r->on_token = request.on_token;
  r->on_done = request.on_done;
  r->session = request.session;
  r->submitted = Clock::now();
  if (cache_.blocks_for(r->positions_needed) > cache_.shape().n_blocks) {
    return unexpected(Status(LPX_ERR_RESOURCE_EXHAUSTED,
                             "the request needs " + std::to_string(r->positions_needed) +
                                 " positions of KV cache; the pool holds " +
                                 std::to_string(cache_.total_positions())));
  }
  return r;
}

}  // namespace lpx::core
