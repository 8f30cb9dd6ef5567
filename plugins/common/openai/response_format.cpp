#include "response_format.hpp"

#include <algorithm>
#include <chrono>
#include <random>

#include "lpx/cpp/utf8.hpp"

namespace lpx::openai {
namespace {

namespace json = boost::json;

json::array bytes_json(const std::string& piece) {
  json::array bytes;
  for (unsigned char b : piece) bytes.push_back(b);
  return bytes;
}

json::object base(const ResponseContext& c, const char* object) {
  return json::object{{"id", c.id}, {"object", object}, {"created", c.created}, {"model", c.model}};
}

std::string trimmed(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return std::string(text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1));
}

json::value finish_value(const char* finish) {
  return finish != nullptr && *finish ? json::value(finish) : json::value();
}

}  // namespace

std::string random_id(const char* prefix) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(rng()));
  return std::string(prefix) + hex;
}

ResponseContext make_response_context(const GenerationRequest& request, const std::string& model) {
  ResponseContext c;
  c.endpoint = request.endpoint;
  c.id = random_id(request.endpoint == Endpoint::kChat ? "chatcmpl-" : "cmpl-");
  c.created = std::chrono::duration_cast<std::chrono::seconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
  c.model = model;
  c.logprobs = request.logprobs;
  c.n = request.n;
  c.tools = request.tools;
  return c;
}

const char* finish_reason_name(lpx_finish_reason reason) {
  switch (reason) {
    case LPX_FINISH_LENGTH: return "length";
    case LPX_FINISH_EOG:
    case LPX_FINISH_STOP: return "stop";
    default: return "";
  }
}

const char* finish_reason_name(lpx_finish_reason reason, bool called_tools) {
  if (called_tools && (reason == LPX_FINISH_EOG || reason == LPX_FINISH_STOP)) return "tool_calls";
  return finish_reason_name(reason);
}

json::array tool_calls_json(const std::vector<ParsedToolCall>& calls) {
  json::array out;
  for (const ParsedToolCall& call : calls) {
    out.push_back(json::object{{"id", random_id("call_")},
                               {"type", "function"},
                               {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
  }
  return out;
}

json::value logprobs_json(const ResponseContext& c, const std::vector<TokenOutput>& tokens,
                          std::size_t text_offset) {
  if (!c.logprobs) return nullptr;
  if (c.endpoint == Endpoint::kChat) {
    json::array content;
    for (const TokenOutput& t : tokens) {
      json::array top;
      for (const TokenLogprob& a : t.top) {
        top.push_back(json::object{{"token", utf8::repair(a.piece)},
                                   {"logprob", a.logprob},
                                   {"bytes", bytes_json(a.piece)}});
      }
      content.push_back(json::object{{"token", utf8::repair(t.chosen.piece)},
                                     {"logprob", t.chosen.logprob},
                                     {"bytes", bytes_json(t.chosen.piece)},
                                     {"top_logprobs", std::move(top)}});
    }
    return json::object{{"content", std::move(content)}};
  }
  json::array names, logprobs, tops, offsets;
  for (const TokenOutput& t : tokens) {
    const std::string piece = utf8::repair(t.chosen.piece);
    names.push_back(json::string(piece));
    logprobs.push_back(t.chosen.logprob);
    json::object top;
    for (const TokenLogprob& a : t.top) top[utf8::repair(a.piece)] = a.logprob;
    tops.push_back(std::move(top));
    offsets.push_back(text_offset);
    text_offset += piece.size();
  }
  return json::object{{"tokens", std::move(names)},
                      {"token_logprobs", std::move(logprobs)},
                      {"top_logprobs", std::move(tops)},
                      {"text_offset", std::move(offsets)}};
}

json::object usage_json(const ResponseContext& c, const std::vector<ChoiceOutcome>& outcomes) {
  std::uint64_t prompt = 0, cached = 0, completion = 0;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (i % c.n == 0) {  // every choice of one prompt has the same prompt
      prompt += outcomes[i].prompt_tokens;
      cached += outcomes[i].cached_tokens;
    }
    completion += outcomes[i].completion_tokens;
  }
  json::object usage{{"prompt_tokens", prompt},
                     {"completion_tokens", completion},
                     {"total_tokens", prompt + completion}};
  if (c.endpoint == Endpoint::kGenerate) {
    usage["cached_tokens"] = cached;
  } else {
    usage["prompt_tokens_details"] = json::object{{"cached_tokens", cached}};
  }
  return usage;
}

json::object chunk_json(const ResponseContext& c, std::uint32_t choice, const std::string& text,
                        json::value logprobs, const char* finish) {
  if (c.endpoint == Endpoint::kGenerate) return json::object{{"text", text}};
  json::object entry{{"index", choice}};
  json::object out;
  if (c.endpoint == Endpoint::kChat) {
    out = base(c, "chat.completion.chunk");
    json::object delta;
    if (!text.empty() || finish == nullptr || *finish == '\0') delta["content"] = text;
    entry["delta"] = std::move(delta);
  } else {
    out = base(c, "text_completion");
    entry["text"] = text;
  }
  entry["logprobs"] = std::move(logprobs);
  entry["finish_reason"] = finish_value(finish);
  out["choices"] = json::array{std::move(entry)};
  return out;
}

json::object tool_calls_chunk_json(const ResponseContext& c, std::uint32_t choice,
                                   const std::vector<ParsedToolCall>& calls) {
  json::array deltas = tool_calls_json(calls);
  for (std::size_t i = 0; i < deltas.size(); ++i) deltas[i].as_object()["index"] = i;
  json::object out = base(c, "chat.completion.chunk");
  out["choices"] = json::array{json::object{{"index", choice},
                                            {"delta", {{"tool_calls", std::move(deltas)}}},
                                            {"logprobs", nullptr},
                                            {"finish_reason", nullptr}}};
  return out;
}

json::object role_chunk_json(const ResponseContext& c, std::uint32_t choice) {
  json::object out = base(c, "chat.completion.chunk");
  out["choices"] = json::array{json::object{{"index", choice},
                                            {"delta", {{"role", "assistant"}, {"content", ""}}},
                                            {"logprobs", nullptr},
                                            {"finish_reason", nullptr}}};
  return out;
}

json::object usage_chunk_json(const ResponseContext& c, const std::vector<ChoiceOutcome>& outcomes) {
  if (c.endpoint == Endpoint::kGenerate) {
    const ChoiceOutcome& o = outcomes.front();
    return json::object{{"finish_reason", finish_reason_name(o.reason)},
                        {"usage", usage_json(c, outcomes)},
                        {"timings", {{"ttft_ms", o.ttft_ms},
                                     {"total_ms", o.total_ms},
                                     {"tokens_per_s", o.tokens_per_second}}}};
  }
  json::object out = base(c, c.endpoint == Endpoint::kChat ? "chat.completion.chunk" : "text_completion");
  out["choices"] = json::array();
  out["usage"] = usage_json(c, outcomes);
  return out;
}

json::object full_response_json(const ResponseContext& c, const std::vector<CollectedChoice>& choices) {
  std::vector<ChoiceOutcome> outcomes;
  for (const CollectedChoice& ch : choices) outcomes.push_back(ch.outcome);
  if (c.endpoint == Endpoint::kGenerate) {
    json::object out = usage_chunk_json(c, outcomes);
    out["text"] = choices.front().text;
    return out;
  }
  json::array list;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    const CollectedChoice& ch = choices[i];
    json::object entry{{"index", i}};
    bool called_tools = false;
    if (c.endpoint == Endpoint::kChat && c.tools.active()) {
      ParsedAnswer answer = parse_tool_calls(ch.text, c.tools);
      called_tools = !answer.calls.empty();
      // Whitespace the model put before its answer is not content (the stream holds it back).
      json::object message{{"role", "assistant"}, {"content", ch.text.substr(content_start(ch.text))}};
      if (called_tools) {
        const std::string content = trimmed(answer.content);
        message["content"] = content.empty() ? json::value(nullptr) : json::value(content);
        message["tool_calls"] = tool_calls_json(answer.calls);
      }
      entry["message"] = std::move(message);
    } else if (c.endpoint == Endpoint::kChat) {
      entry["message"] = json::object{{"role", "assistant"}, {"content", ch.text}};
    } else {
      entry["text"] = ch.text;
    }
    entry["logprobs"] = logprobs_json(c, ch.logprob_tokens, 0);
    entry["finish_reason"] = finish_reason_name(ch.outcome.reason, called_tools);
    list.push_back(std::move(entry));
  }
  json::object out = base(c, c.endpoint == Endpoint::kChat ? "chat.completion" : "text_completion");
  out["choices"] = std::move(list);
  out["usage"] = usage_json(c, outcomes);
  return out;
}

}  // namespace lpx::openai
