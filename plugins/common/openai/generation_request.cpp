#include "generation_request.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "api_error.hpp"
#include "json_fields.hpp"
#include "tool_conversation.hpp"
#include "tool_grammar.hpp"

namespace lpx::openai {
namespace {

constexpr std::size_t kMaxPrompts = 16;
constexpr std::uint32_t kMaxChoices = 32;  // prompts x n
constexpr std::size_t kMaxStops = 8;
constexpr std::size_t kMaxLogitBias = 1024;

// Text for the engine, whose strings are NUL-terminated: an embedded NUL would cut it short.
std::string text(const boost::json::string& s, const char* name) {
  if (std::string_view(s).find('\0') != std::string_view::npos) field_error(name, "text without NUL characters");
  return std::string(s);
}

std::vector<std::int32_t> token_array(const boost::json::array& items, const char* name) {
  std::vector<std::int32_t> tokens;
  tokens.reserve(items.size());
  for (const boost::json::value& v : items) {
    if (!v.is_int64() && !v.is_uint64()) field_error(name, "a string, an array of strings or of token ids");
    const std::int64_t id = v.is_int64() ? v.get_int64() : -1;
    if (id < 0 || id > INT32_MAX) field_error(name, "made of token ids that exist in the vocabulary");
    tokens.push_back(static_cast<std::int32_t>(id));
  }
  return tokens;
}

std::vector<PromptInput> read_prompts(const boost::json::value& v) {
  constexpr const char* kName = "prompt";
  const char* kShape = "a string, an array of strings, or an array of token ids";
  std::vector<PromptInput> prompts;
  if (v.is_string()) {
    prompts.push_back({text(v.get_string(), kName), {}});
    return prompts;
  }
  if (!v.is_array() || v.get_array().empty()) field_error(kName, kShape);
  const boost::json::array& items = v.get_array();
  if (items.front().is_number()) {
    prompts.push_back({{}, token_array(items, kName)});
    return prompts;
  }
  if (items.size() > kMaxPrompts) field_error(kName, "at most " + std::to_string(kMaxPrompts) + " prompts");
  for (const boost::json::value& item : items) {
    if (item.is_string()) {
      prompts.push_back({text(item.get_string(), kName), {}});
    } else if (item.is_array() && !item.get_array().empty()) {
      prompts.push_back({{}, token_array(item.get_array(), kName)});
    } else {
      field_error(kName, kShape);
    }
  }
  return prompts;
}

// OpenAI content: a string, or an array of parts of which only {"type":"text"} is supported.
std::string message_content(const boost::json::value& v) {
  if (v.is_string()) return text(v.get_string(), "messages");
  if (!v.is_array()) field_error("messages", "objects whose 'content' is a string or text parts");
  std::string joined;
  for (const boost::json::value& part : v.get_array()) {
    const boost::json::object* p = part.if_object();
    const boost::json::value* type = p ? p->if_contains("type") : nullptr;
    const boost::json::value* t = p ? p->if_contains("text") : nullptr;
    if (type == nullptr || !type->is_string() || type->get_string() != "text" || t == nullptr ||
        !t->is_string()) {
      throw bad_request("only text content parts are supported", "messages");
    }
    joined += text(t->get_string(), "messages");
  }
  return joined;
}

// A tool call of an assistant message: {"id", "type": "function", "function": {"name",
// "arguments": JSON object text}}.
void check_tool_call(const boost::json::value& call) {
  const boost::json::object* c = call.if_object();
  const boost::json::value* function = c ? c->if_contains("function") : nullptr;
  const boost::json::object* f = function ? function->if_object() : nullptr;
  const boost::json::value* name = f ? f->if_contains("name") : nullptr;
  const boost::json::value* arguments = f ? f->if_contains("arguments") : nullptr;
  if (name == nullptr || !name->is_string() || arguments == nullptr || !arguments->is_string()) {
    field_error("messages", "tool calls of the form {\"id\", \"type\": \"function\", \"function\": "
                            "{\"name\", \"arguments\"}}");
  }
  boost::system::error_code error;
  if (!boost::json::parse(arguments->get_string(), error).is_object() || error) {
    throw bad_request("messages: a tool call's arguments must be a JSON object, as text", "messages");
  }
  for (const auto& [key, value] : *c) {
    if (key == "id" && value.is_string()) continue;
    if (key == "type" && value.is_string() && value.get_string() == "function") continue;
    if (key == "function") continue;
    if (key == "index" && value.is_number()) continue;  // a streamed call's, as clients keep it
    throw bad_request("messages: unrecognized tool call field '" + std::string(key) + "'", "messages");
  }
}

// The messages as the engine's messages_json reads them: role, content (a string or null; text
// parts joined), the assistant's tool_calls and the tool message's tool_call_id. Fields that
// OpenAI's own responses carry empty (refusal, annotations, audio, function_call) are accepted
// when empty, and what clients add to an answer they keep (parse()'s `parsed`, a streamed
// call's `index`), so an answer's message can go back into the conversation as it came.
boost::json::array read_messages(const boost::json::value& v) {
  if (!v.is_array() || v.get_array().empty()) field_error("messages", "a non-empty array of messages");
  boost::json::array out;
  for (const boost::json::value& m : v.get_array()) {
    const boost::json::object* message = m.if_object();
    const boost::json::value* role = message ? message->if_contains("role") : nullptr;
    const boost::json::value* content = message ? message->if_contains("content") : nullptr;
    if (role == nullptr || !role->is_string()) field_error("messages", "objects with a string 'role'");
    const std::string_view r = role->get_string();
    const boost::json::value* calls = message->if_contains("tool_calls");
    const bool has_calls = calls != nullptr && !calls->is_null();
    if ((content == nullptr || content->is_null()) && !(r == "assistant" && has_calls)) {
      field_error("messages", "objects with a 'content' (null only beside an assistant's tool_calls)");
    }
    boost::json::object entry{{"role", text(role->get_string(), "messages")},
                              {"content", content == nullptr || content->is_null()
                                              ? boost::json::value(nullptr)
                                              : boost::json::value(message_content(*content))}};
    for (const auto& [key, value] : *message) {
      if (key == "role" || key == "content") continue;
      if (key == "name" && value.is_string()) {
        entry["name"] = text(value.get_string(), "messages");
      } else if (key == "tool_calls" && r == "assistant" && (value.is_array() || value.is_null())) {
        if (value.is_null()) continue;
        for (const boost::json::value& call : value.get_array()) check_tool_call(call);
        entry["tool_calls"] = value;
      } else if (key == "tool_call_id" && r == "tool" && value.is_string()) {
        entry["tool_call_id"] = value;
      } else if (key == "parsed" && r == "assistant") {
        // openai-python's parse() result: the content parsed again, nothing new.
      } else if ((key == "refusal" || key == "audio" || key == "function_call") && value.is_null()) {
      } else if (key == "annotations" && (value.is_null() || (value.is_array() && value.get_array().empty()))) {
      } else {
        throw bad_request("messages: the message field '" + std::string(key) + "' is not supported" +
                              (value.is_null() ? "" : " with this role or value"),
                          "messages");
      }
    }
    if (r == "function") throw bad_request("messages of role 'function' are the deprecated form of 'tool'", "messages");
    if (r == "tool" && !entry.contains("tool_call_id")) field_error("messages", "tool messages with a 'tool_call_id'");
    out.push_back(std::move(entry));
  }
  return out;
}

void read_stop(const boost::json::value& v, GenerationRequest& out) {
  if (v.is_string()) {
    out.stop.push_back(text(v.get_string(), "stop"));
    return;
  }
  if (!v.is_array() || v.get_array().size() > kMaxStops) {
    field_error("stop", "a string or an array of at most " + std::to_string(kMaxStops) + " strings");
  }
  for (const boost::json::value& s : v.get_array()) {
    if (!s.is_string()) field_error("stop", "a string or an array of strings");
    out.stop.push_back(text(s.get_string(), "stop"));
  }
}

void read_logit_bias(const boost::json::value& v, GenerationRequest& out) {
  if (!v.is_object() || v.get_object().size() > kMaxLogitBias) {
    field_error("logit_bias", "an object of at most " + std::to_string(kMaxLogitBias) +
                                  " token ids to numbers");
  }
  for (const auto& [key, value] : v.get_object()) {
    std::int64_t id = -1;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (ec != std::errc() || end != key.data() + key.size() || id < 0 || id > INT32_MAX) {
      field_error("logit_bias", "keyed by token ids");
    }
    if (!value.is_number()) field_error("logit_bias", "an object of token ids to numbers");
    const double bias = value.to_number<double>();
    if (!(bias >= -100 && bias <= 100)) field_error("logit_bias", "biases between -100 and 100");
    out.bias_tokens.push_back(static_cast<std::int32_t>(id));
    out.bias_values.push_back(static_cast<float>(bias));
  }
}

void read_sampling(const JsonFields& f, GenerationRequest& out) {
  lpx_sampling_overrides& s = out.sampling;
  s.struct_size = sizeof(s);
  if (auto t = f.number("temperature", 0, 2)) { s.temperature = *t; s.set |= LPX_SET_TEMPERATURE; }
  if (auto p = f.number("top_p", 0, 1)) {
    if (*p <= 0) field_error("top_p", "greater than 0 and at most 1");
    s.top_p = *p;
    s.set |= LPX_SET_TOP_P;
  }
  if (auto k = f.integer("top_k", 0, 1 << 20); k && *k > 0) { s.top_k = *k; s.set |= LPX_SET_TOP_K; }
  if (auto m = f.number("min_p", 0, 1)) { s.min_p = *m; s.set |= LPX_SET_MIN_P; }
  if (auto p = f.number("presence_penalty", -2, 2)) { s.presence_penalty = *p; s.set |= LPX_SET_PRESENCE_PENALTY; }
  if (auto p = f.number("frequency_penalty", -2, 2)) { s.frequency_penalty = *p; s.set |= LPX_SET_FREQUENCY_PENALTY; }
  if (auto p = f.number("repetition_penalty", 0.01, 10)) { s.repeat_penalty = *p; s.set |= LPX_SET_REPEAT_PENALTY; }
  if (auto seed = f.integer("seed", INT64_MIN, INT64_MAX)) {
    s.seed = static_cast<std::uint64_t>(*seed);
    s.set |= LPX_SET_SEED;
  }
}

// response_format (OpenAI structured outputs) and grammar (LPX's GBNF extension).
void read_structured_output(const JsonFields& f, GenerationRequest& out) {
  if (const boost::json::value* format = f.find("response_format")) {
    const boost::json::object* o = format->if_object();
    const boost::json::value* type = o ? o->if_contains("type") : nullptr;
    if (type == nullptr || !type->is_string()) {
      field_error("response_format", "an object with a 'type' (text, json_object or json_schema)");
    }
    const std::string_view kind = type->get_string();
    if (kind == "json_object") {
      // Any JSON object: properties of any name and value.
      out.grammar = R"({"type": "object", "additionalProperties": true})";
    } else if (kind == "json_schema") {
      const boost::json::value* spec = o->if_contains("json_schema");
      const boost::json::object* s = spec ? spec->if_object() : nullptr;
      const boost::json::value* schema = s ? s->if_contains("schema") : nullptr;
      if (schema == nullptr || !(schema->is_object() || schema->is_bool())) {
        field_error("response_format",
                    "{'type': 'json_schema', 'json_schema': {'name': ..., 'schema': {...}}}");
      }
      if (const boost::json::value* strict = s->if_contains("strict");
          strict != nullptr && !strict->is_bool() && !strict->is_null()) {
        field_error("response_format", "with a boolean 'strict'");
      }
      // strict or not, the output is held to the schema: every keyword LPX accepts is enforced.
      out.grammar = boost::json::serialize(*schema);
    } else if (kind != "text") {
      field_error("response_format", "of type text, json_object or json_schema");
    }
    if (!out.grammar.empty()) {
      out.grammar_kind = LPX_GRAMMAR_JSON_SCHEMA;
      out.grammar_field = "response_format";
    }
  }
  if (auto grammar = f.string("grammar")) {
    if (out.grammar_kind != 0) {
      throw bad_request("give either 'response_format' or 'grammar', not both", "grammar");
    }
    if (grammar->empty() || grammar->find('\0') != std::string::npos) {
      field_error("grammar", "a GBNF grammar with a root rule");
    }
    out.grammar = std::move(*grammar);
    out.grammar_kind = LPX_GRAMMAR_GBNF;
    out.grammar_field = "grammar";
  }
}

// Tools belong to chat: a completion or /generate that offers them is refused.
void refuse_tools_outside_chat(const JsonFields& f) {
  for (const char* name : {"tools", "functions", "parallel_tool_calls"}) {
    if (f.find(name) != nullptr) {
      throw bad_request(std::string("'") + name + "' is for /v1/chat/completions", name);
    }
  }
  for (const char* name : {"tool_choice", "function_call"}) {
    if (const boost::json::value* choice = f.find(name);
        choice != nullptr && !(choice->is_string() && choice->get_string() == "none")) {
      throw bad_request(std::string("'") + name + "' is for /v1/chat/completions", name);
    }
  }
}

// The tools of a chat: the conversation as the model's template receives them, and the grammar
// of the calls (which takes the place of response_format's, keeping it as one alternative).
void read_tools(const boost::json::object& body, const boost::json::array& messages,
                const RequestLimits& limits, GenerationRequest& out) {
  out.tools = read_tool_use(body, limits.tool_syntax, limits.system_role);
  ToolConversation conversation = tool_conversation(messages, out.tools);
  out.messages_json = std::move(conversation.messages_json);
  out.tools_json = std::move(conversation.tools_json);
  std::string grammar = tool_call_grammar(out.tools, ContentGrammar{out.grammar, out.grammar_kind});
  if (grammar.empty()) return;
  out.content_grammar_field = std::move(out.grammar_field);
  out.grammar = std::move(grammar);
  out.grammar_kind = LPX_GRAMMAR_STRUCTURAL_TAG;
  out.grammar_field = "tools";
}

// Every field of a body must be one LPX reads (or one OpenAI itself ignores): an unknown field,
// a typo or a feature LPX lacks, is a 400 that names it rather than an answer that ignored it.
void refuse_unknown_fields(const boost::json::object& body, Endpoint endpoint,
                           const std::vector<std::string>& caller_fields) {
  static constexpr std::string_view kCommon[] = {
      "model", "max_tokens", "stop", "temperature", "top_p", "top_k", "min_p",
      "presence_penalty", "frequency_penalty", "repetition_penalty", "seed", "logit_bias", "n",
      "stream", "stream_options", "logprobs", "top_logprobs", "user", "response_format",
      "grammar", "tools", "tool_choice", "functions", "function_call", "parallel_tool_calls",
      // Accepted as OpenAI accepts them, changing nothing here (docs/http-server.md).
      "store", "metadata", "service_tier"};
  static constexpr std::string_view kCompletions[] = {"prompt", "echo", "best_of", "suffix",
                                                      "parse_special"};
  static constexpr std::string_view kChat[] = {"messages", "max_completion_tokens"};
  for (const auto& [key_view, value] : body) {
    const std::string_view key = key_view;
    const auto in = [&](auto& list) { return std::find(std::begin(list), std::end(list), key) != std::end(list); };
    const bool known = in(kCommon) || (endpoint != Endpoint::kChat && in(kCompletions)) ||
                       (endpoint != Endpoint::kCompletions && in(kChat)) ||
                       std::find(caller_fields.begin(), caller_fields.end(), key) != caller_fields.end();
    if (!known) {
      throw bad_request("unrecognized request argument '" + std::string(key) + "'", std::string(key));
    }
  }
  const JsonFields f(body);
  if (endpoint == Endpoint::kGenerate) {
    // /generate answers one text without log-probabilities: what would change that is refused.
    for (const char* name : {"n", "logprobs", "top_logprobs", "echo", "best_of", "suffix"}) {
      if (f.find(name) != nullptr) {
        throw bad_request(std::string("'") + name + "' is not supported by /generate", name);
      }
    }
    if (f.find("prompt") != nullptr && f.find("messages") != nullptr) {
      throw bad_request("give either 'prompt' or 'messages', not both", "prompt");
    }
  }
  if (f.boolean("store").value_or(false)) {
    throw bad_request("'store' is not supported: LPX keeps no completions", "store");
  }
  if (const boost::json::value* m = f.find("metadata"); m != nullptr && !m->is_object()) {
    field_error("metadata", "an object");
  }
  if (auto tier = f.string("service_tier"); tier && *tier != "auto" && *tier != "default") {
    field_error("service_tier", "auto or default");
  }
}

}  // namespace

GenerationRequest parse_generation_request(const boost::json::object& body, Endpoint endpoint,
                                           const RequestLimits& limits) {
  refuse_unknown_fields(body, endpoint, limits.caller_fields);
  const JsonFields f(body);
  GenerationRequest out;
  out.endpoint = endpoint;
  const boost::json::value* prompt = f.find("prompt");
  const boost::json::value* messages = f.find("messages");
  boost::json::array conversation;
  if (endpoint == Endpoint::kChat || (endpoint == Endpoint::kGenerate && messages != nullptr)) {
    if (messages == nullptr) field_error("messages", "given");
    conversation = read_messages(*messages);
  } else {
    if (prompt == nullptr) field_error("prompt", "given");
    out.prompts = read_prompts(*prompt);
    if (endpoint == Endpoint::kGenerate && out.prompts.size() != 1) {
      field_error("prompt", "one string or one array of token ids");
    }
  }

  const std::int64_t limit = limits.max_tokens;
  auto max_tokens = f.integer("max_tokens", 1, limit);
  if (endpoint == Endpoint::kChat) {
    if (auto m = f.integer("max_completion_tokens", 1, limit)) max_tokens = m;
  }
  out.max_tokens = static_cast<std::uint32_t>(max_tokens.value_or(0));
  if (const boost::json::value* stop = f.find("stop")) read_stop(*stop, out);
  read_sampling(f, out);
  if (const boost::json::value* bias = f.find("logit_bias")) read_logit_bias(*bias, out);

  if (endpoint != Endpoint::kGenerate) out.n = static_cast<std::uint32_t>(f.integer("n", 1, 8).value_or(1));
  if (out.choice_count() > kMaxChoices) {
    field_error("n", "such that prompts x n is at most " + std::to_string(kMaxChoices));
  }
  out.stream = f.boolean("stream").value_or(false);
  if (const boost::json::value* options = f.find("stream_options")) {
    if (!options->is_object()) field_error("stream_options", "an object");
    out.include_usage = JsonFields(options->get_object()).boolean("include_usage").value_or(false);
  }
  if (endpoint == Endpoint::kChat) {
    out.logprobs = f.boolean("logprobs").value_or(false);
    out.top_logprobs = static_cast<std::uint32_t>(f.integer("top_logprobs", 0, LPX_MAX_TOP_LOGPROBS).value_or(0));
    if (out.top_logprobs > 0 && !out.logprobs) field_error("logprobs", "true when top_logprobs is set");
  } else if (auto lp = f.integer("logprobs", 0, 5)) {
    out.logprobs = true;
    out.top_logprobs = static_cast<std::uint32_t>(*lp);
  }
  if (f.boolean("echo").value_or(false)) throw bad_request("'echo' is not supported", "echo");
  if (f.integer("best_of", 1, 1).value_or(1) != 1) throw bad_request("'best_of' is not supported", "best_of");
  if (!f.string("suffix").value_or("").empty()) throw bad_request("'suffix' is not supported", "suffix");
  f.string("user");  // type-checked, otherwise unused
  out.model = f.string("model").value_or("");  // the transport routes by it
  if (endpoint != Endpoint::kChat) out.parse_special = f.boolean("parse_special").value_or(true);
  read_structured_output(f, out);
  if (endpoint == Endpoint::kChat) {
    read_tools(body, conversation, limits, out);
  } else {
    refuse_tools_outside_chat(f);
    out.tools.syntax = limits.tool_syntax;
    // /generate's messages: past tool calls and results still reach the template.
    if (!conversation.empty()) out.messages_json = tool_conversation(conversation, out.tools).messages_json;
  }
  return out;
}

lpx_request GenerationRequest::engine_request(std::uint32_t index, Storage& storage) const {
  lpx_request r{};
  r.struct_size = sizeof(r);
  const std::uint32_t prompt_index = index / n;
  if (!prompts.empty()) {
    const PromptInput& p = prompts[prompt_index];
    if (p.tokens.empty()) {
      r.prompt = p.text.c_str();
    } else {
      r.prompt_tokens = p.tokens.data();
      r.prompt_token_count = p.tokens.size();
    }
  } else {
    r.messages_json = messages_json.c_str();
    r.tools_json = tools_json.empty() ? nullptr : tools_json.c_str();
  }
  r.max_tokens = max_tokens;
  storage.stop.clear();
  for (const std::string& s : stop) storage.stop.push_back(s.c_str());
  r.stop = storage.stop.data();
  r.stop_count = storage.stop.size();
  storage.sampling = sampling;
  storage.sampling.struct_size = sizeof(storage.sampling);
  if (storage.sampling.set & LPX_SET_SEED) storage.sampling.seed += index % n;
  storage.sampling.logit_bias_tokens = bias_tokens.data();
  storage.sampling.logit_bias_values = bias_values.data();
  storage.sampling.logit_bias_count = bias_tokens.size();
  if (grammar_kind != 0) {
    storage.sampling.set |= LPX_SET_GRAMMAR;
    storage.sampling.grammar = grammar.c_str();
    storage.sampling.grammar_kind = grammar_kind;
  }
  r.sampling = &storage.sampling;
  r.logprobs = logprobs ? 1 : 0;
  r.top_logprobs = top_logprobs;
  r.flags = LPX_REQUEST_CONTEXT_END_IS_LENGTH | (parse_special ? LPX_REQUEST_PARSE_SPECIAL : 0u);
  r.adapter = adapter.empty() ? nullptr : adapter.c_str();
  return r;
}

}  // namespace lpx::openai
