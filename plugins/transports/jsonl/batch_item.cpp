#include "batch_item.hpp"

#include "api_error.hpp"
#include "json_fields.hpp"

namespace lpx::batch {
namespace {

namespace json = boost::json;

// The id of a line, if it names one: a string, or an integer written as its decimal text.
std::optional<std::string> id_of(const json::value* v) {
  if (v == nullptr) return std::nullopt;
  if (v->is_string() && !v->get_string().empty()) return std::string(v->get_string());
  if (v->is_int64()) return std::to_string(v->get_int64());
  if (v->is_uint64()) return std::to_string(v->get_uint64());
  return std::nullopt;
}

void read_request(BatchItem& item, const json::object& body, openai::Endpoint endpoint,
                  const ItemDefaults& defaults) {
  item.request = openai::parse_generation_request(body, endpoint, defaults.limits);
  if (item.request.choice_count() != 1) {
    throw openai::bad_request("a batch line asks for one answer: 'n' must be 1 and 'prompt' one prompt", "n");
  }
  item.request.stream = false;
  if (item.request.max_tokens == 0) item.request.max_tokens = defaults.max_tokens;
}

}  // namespace

BatchItem read_batch_item(std::uint64_t line_number, const std::string& line,
                          const ItemDefaults& defaults) {
  BatchItem item;
  item.line = line_number;
  item.key = "line:" + std::to_string(line_number);
  json::object object;
  try {
    object = openai::parse_json_object(line);
  } catch (const openai::ApiError& e) {
    item.error = e.what();
    return item;
  }
  const bool openai_line = object.contains("custom_id");
  if (openai_line) {
    item.format = LineFormat::kOpenAiBatch;
    const std::optional<std::string> id = id_of(object.if_contains("custom_id"));
    if (!id) {
      item.error = "'custom_id' must be a non-empty string";
      return item;
    }
    item.key = *id;
  } else if (const json::value* id = object.if_contains("id"); id != nullptr && !id->is_null()) {
    const std::optional<std::string> text = id_of(id);
    if (!text) {
      item.error = "'id' must be a non-empty string or an integer";
      return item;
    }
    item.key = *text;
  } else {
    item.key = std::to_string(line_number);
  }
  item.has_id = true;

  try {
    if (openai_line) {
      const openai::JsonFields f(object);
      const std::string method = f.string("method").value_or("POST");
      item.url = f.string("url").value_or("");
      if (method != "POST") throw openai::bad_request("'method' must be POST", "method");
      openai::Endpoint endpoint;
      if (item.url == "/v1/chat/completions") {
        endpoint = openai::Endpoint::kChat;
      } else if (item.url == "/v1/completions") {
        endpoint = openai::Endpoint::kCompletions;
      } else {
        throw openai::bad_request("'url' must be /v1/chat/completions or /v1/completions", "url");
      }
      const json::value* body = f.find("body");
      if (body == nullptr || !body->is_object()) openai::field_error("body", "an object");
      read_request(item, body->get_object(), endpoint, defaults);
    } else {
      const bool chat = object.contains("messages") && !object.contains("prompt");
      if (!chat && !object.contains("prompt")) {
        throw openai::bad_request("the line has neither 'prompt' nor 'messages'", "prompt");
      }
      // A plain line: the request's fields beside the line's own id.
      ItemDefaults plain = defaults;
      plain.limits.caller_fields = {"custom_id", "id"};
      read_request(item, object, chat ? openai::Endpoint::kChat : openai::Endpoint::kCompletions,
                   plain);
    }
  } catch (const openai::ApiError& e) {
    item.error = e.what();
  }
  return item;
}

}  // namespace lpx::batch
