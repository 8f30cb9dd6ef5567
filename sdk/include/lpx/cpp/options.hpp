// Declaring options (constexpr helpers) and reading them (lpx::Options) from C++.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lpx/cpp/host.hpp"
#include "lpx/cpp/status.hpp"
#include "lpx/options.h"

namespace lpx {

// --- declaring ----------------------------------------------------------------------------------
// constexpr lpx_option_spec kOptions[] = {
//     lpx::in_range(lpx::option("top_k", LPX_OPTION_INT, "40", "Keep the k best tokens"), 1, 1e6),
//     lpx::required(lpx::option("path", LPX_OPTION_STRING, nullptr, "Model file")),
// };
constexpr lpx_option_spec option(const char* name, lpx_option_type type, const char* default_value,
                                 const char* description) {
  return lpx_option_spec{name, static_cast<std::int32_t>(type), 0u, default_value, description,
                         0.0, 0.0, nullptr};
}
constexpr lpx_option_spec required(lpx_option_spec spec) {
  spec.flags |= LPX_OPTION_REQUIRED;
  return spec;
}
constexpr lpx_option_spec in_range(lpx_option_spec spec, double min, double max) {
  spec.flags |= LPX_OPTION_HAS_RANGE;
  spec.min = min;
  spec.max = max;
  return spec;
}
constexpr lpx_option_spec one_of(lpx_option_spec spec, const char* choices) {
  spec.choices = choices;
  return spec;
}

// --- reading ------------------------------------------------------------------------------------
// A view of the options passed to create/validate. Valid only during that call; every getter
// returns an owning copy. Getters throw lpx::Error (turned into a status at the boundary).
class Options {
 public:
  explicit Options(const lpx_options* options) noexcept : options_(options) {}

  bool is_set(const char* name) const { return api().option_is_set(options_, name) != 0; }

  std::string get_string(const char* name) const {
    const char* text = nullptr;
    size_t length = 0;
    throw_if_error(api().option_string(options_, name, &text, &length));
    return std::string(text, length);
  }
  std::int64_t get_int(const char* name) const {
    std::int64_t value = 0;
    throw_if_error(api().option_int(options_, name, &value));
    return value;
  }
  double get_float(const char* name) const {
    double value = 0;
    throw_if_error(api().option_float(options_, name, &value));
    return value;
  }
  bool get_bool(const char* name) const {
    std::int32_t value = 0;
    throw_if_error(api().option_bool(options_, name, &value));
    return value != 0;
  }
  std::vector<std::string> get_string_list(const char* name) const {
    std::vector<std::string> items(list_size(name));
    for (size_t i = 0; i < items.size(); ++i) {
      const char* text = nullptr;
      size_t length = 0;
      throw_if_error(api().option_list_string(options_, name, i, &text, &length));
      items[i].assign(text, length);
    }
    return items;
  }
  std::vector<std::int64_t> get_int_list(const char* name) const {
    std::vector<std::int64_t> items(list_size(name));
    for (size_t i = 0; i < items.size(); ++i) {
      throw_if_error(api().option_list_int(options_, name, i, &items[i]));
    }
    return items;
  }

 private:
  static const lpx_host_api& api() {
    const lpx_host_api* h = host();
    if (h == nullptr) throw Error(LPX_ERR_INTERNAL, "options read before the plugin's init");
    return *h;
  }
  size_t list_size(const char* name) const {
    size_t size = 0;
    throw_if_error(api().option_list_size(options_, name, &size));
    return size;
  }

  const lpx_options* options_;
};

}  // namespace lpx
