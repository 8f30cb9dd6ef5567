// What a completions, chat or /generate body asks for, validated and owned, and the engine
// requests (one per choice) built from it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>
#include <lpx/cpp/status.hpp>
#include <lpx/engine.h>

#include "tool_use.hpp"

namespace lpx::openai {

enum class Endpoint { kCompletions, kChat, kGenerate };

struct PromptInput {
  std::string text;                  // used when tokens is empty
  std::vector<std::int32_t> tokens;  // a pre-tokenized prompt
};

struct RequestLimits {
  std::uint32_t max_tokens = 0;  // largest max_tokens accepted
  // Fields the caller reads itself beside the request's (a batch line's custom_id): not refused
  // as unknown.
  std::vector<std::string> caller_fields;
  // How the model calls tools, read from its chat template (detect_tool_syntax).
  ToolSyntax tool_syntax = ToolSyntax::kDescribedHermes;
  bool system_role = true;  // template_takes_system_role
};

struct GenerationRequest {
  Endpoint endpoint = Endpoint::kCompletions;
  std::vector<PromptInput> prompts;  // completions and /generate with a prompt
  // Chat and /generate with messages: the conversation as the template receives it
  // (tool_conversation.hpp), and the tools it offers (empty: none).
  std::string messages_json;
  std::string tools_json;
  ToolUse tools;  // chat: the tools offered and the calls asked for
  std::uint32_t max_tokens = 0;  // 0: until the model stops or the context ends ("length")
  std::vector<std::string> stop;
  lpx_sampling_overrides sampling{};
  std::vector<std::int32_t> bias_tokens;
  std::vector<float> bias_values;
  std::uint32_t n = 1;
  bool stream = false;
  bool include_usage = false;
  bool logprobs = false;
  std::uint32_t top_logprobs = 0;
  // Structured output: a JSON Schema (response_format json_schema / json_object), a GBNF
  // grammar (the `grammar` extension) or the structural tag of tool calls (tool_grammar.hpp),
  // held by the engine's grammar link.
  std::string grammar;
  std::int32_t grammar_kind = 0;  // an lpx_grammar_kind; 0: none
  std::string grammar_field;      // the request field it came from (response_format, grammar, tools)
  std::string content_grammar_field;  // with tools: the field of the content's alternative
  // Special-token texts in a prompt become those tokens (`parse_special`, default true).
  bool parse_special = true;
  std::string model;  // the `model` field as sent; empty when absent
  // The LoRA adapter the transport resolved `model` to (lpx_request.adapter); empty: none.
  std::string adapter;

  std::uint32_t choice_count() const {
    return static_cast<std::uint32_t>(prompts.empty() ? 1 : prompts.size()) * n;
  }
  // The engine request of choice `index` (prompt index / n, seed + index % n). Points into this
  // object and `storage`, which must outlive the submit call.
  struct Storage {
    std::vector<const char*> stop;
    lpx_sampling_overrides sampling{};
  };
  lpx_request engine_request(std::uint32_t index, Storage& storage) const;
  // The engine's refusal in this request's terms: a refused grammar names the field it came
  // from (response_format, grammar or tools).
  lpx::Error in_request_terms(const lpx::Error& refusal) const {
    if (refusal.field() != "grammar" || grammar_field.empty()) return refusal;
    // Tools beside a response_format: the content's schema is the first alternative of the
    // structural tag (tool_grammar.cpp).
    const bool about_content = !content_grammar_field.empty() &&
                               std::string_view(refusal.what()).find("#/format/elements/0") != std::string_view::npos;
    return lpx::Error(refusal.code(), refusal.what(), about_content ? content_grammar_field : grammar_field);
  }
};

// Throws ApiError (400) naming the offending field: a malformed or out-of-range value, a field
// LPX cannot honour, and a field it does not know (docs/http-server.md lists them all).
GenerationRequest parse_generation_request(const boost::json::object& body, Endpoint endpoint,
                                           const RequestLimits& limits);

}  // namespace lpx::openai
