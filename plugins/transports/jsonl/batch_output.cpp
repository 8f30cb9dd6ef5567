#include "batch_output.hpp"

namespace lpx::batch {
namespace {

namespace json = boost::json;

openai::ResponseContext context_for(const BatchItem& item, openai::Endpoint endpoint,
                                    const std::string& model) {
  openai::ResponseContext c = openai::make_response_context(item.request, model);
  c.endpoint = endpoint;
  return c;
}

}  // namespace

std::string result_line(const BatchItem& item, const openai::CollectedChoice& choice,
                        const std::string& model, std::uint32_t attempts) {
  if (item.format == LineFormat::kOpenAiBatch) {
    const openai::ResponseContext c = context_for(item, item.request.endpoint, model);
    json::object response{{"status_code", 200},
                          {"request_id", openai::random_id("req_")},
                          {"body", openai::full_response_json(c, {choice})}};
    return json::serialize(json::object{{"id", openai::random_id("batch_req_")},
                                        {"custom_id", item.key},
                                        {"response", std::move(response)},
                                        {"error", nullptr}});
  }
  json::object out{{"id", item.key}, {"line", item.line}};
  json::object body = openai::full_response_json(context_for(item, openai::Endpoint::kGenerate, model), {choice});
  for (auto& [key, value] : body) out[key] = std::move(value);
  if (item.request.logprobs) {
    out["logprobs"] = openai::logprobs_json(context_for(item, openai::Endpoint::kCompletions, model),
                                            choice.logprob_tokens, 0);
  }
  out["attempts"] = attempts;
  return json::serialize(out);
}

std::string failure_line(const BatchItem& item, const std::string& code, const std::string& error,
                         std::uint32_t attempts, const std::string& param) {
  if (item.format == LineFormat::kOpenAiBatch && item.has_id) {
    json::object error_object{{"code", code}, {"message", error}};
    if (!param.empty()) error_object["param"] = param;
    return json::serialize(json::object{{"id", openai::random_id("batch_req_")},
                                        {"custom_id", item.key},
                                        {"response", nullptr},
                                        {"error", std::move(error_object)},
                                        {"line", item.line},
                                        {"attempts", attempts}});
  }
  json::object out;
  if (item.has_id) out["id"] = item.key;
  out["line"] = item.line;
  out["error"] = error;
  out["code"] = code;
  if (!param.empty()) out["param"] = param;
  out["attempts"] = attempts;
  return json::serialize(out);
}

}  // namespace lpx::batch
