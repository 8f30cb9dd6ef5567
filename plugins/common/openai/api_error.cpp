#include "api_error.hpp"

#include <boost/json.hpp>

namespace lpx::openai {

std::string ApiError::body() const {
  boost::json::object error{{"message", what()},
                            {"type", type_},
                            {"param", param_.empty() ? boost::json::value() : boost::json::value(param_)},
                            {"code", boost::json::value()}};
  return boost::json::serialize(boost::json::object{{"error", std::move(error)}});
}

}  // namespace lpx::openai
