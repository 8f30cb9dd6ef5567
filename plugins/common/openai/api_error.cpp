#include "api_error.hpp"

#include <boost/json.hpp>

namespace lpx::openai {

std::string ApiError::body() const {
  boost::json::object error{{"message", what()},
                            {"type", type_},
                            {"param", param_.empty() ? boost::json::value() : boost::json::value(param_)},
                            {"code", code_.empty() ? boost::json::value() : boost::json::value(code_)}};
  return boost::json::serialize(boost::json::object{{"error", std::move(error)}});
}

ApiError engine_refusal(const lpx::Error& refusal, const std::string& input_field) {
  const std::string& own = refusal.field();  // what the engine named, perhaps nothing
  const std::string field = own.empty() ? input_field : own;
  const std::string message = refusal.what();
  switch (refusal.code()) {
    case LPX_ERR_INVALID_ARGUMENT:
    case LPX_ERR_UNSUPPORTED:
      return bad_request(message, field);
    case LPX_ERR_RESOURCE_EXHAUSTED:
      if (own == "prompt" || own == "messages" || own == "max_tokens") {
        return bad_request(message, own).with_code("context_length_exceeded");
      }
      return ApiError(413, "invalid_request_error", message, own);
    case LPX_ERR_NOT_FOUND:
      return ApiError(404, "not_found_error", message, field);
    case LPX_ERR_CONFLICT:
      return ApiError(409, "conflict_error", message, field);
    case LPX_ERR_UNAVAILABLE:
    case LPX_ERR_OUT_OF_MEMORY:
      return ApiError(503, "server_error", message).with_retry_after(1);
    default:
      return ApiError(500, "server_error", message);
  }
}

}  // namespace lpx::openai
