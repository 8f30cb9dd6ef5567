#include "chat_template/arguments.hpp"

#include "chat_template/str_cat.hpp"
#include "chat_template/template_error.hpp"

namespace lpx::core::jinja {

Parameters::Parameters(std::string_view callee, const CallArguments& arguments,
                       std::initializer_list<std::string_view> names)
    : bound_(names.size(), nullptr) {
  if (arguments.positional.size() > names.size()) {
    fail(cat(callee, " takes at most ", std::to_string(names.size()), " argument(s) (",
             std::to_string(arguments.positional.size()), " given)"));
  }
  for (std::size_t i = 0; i < arguments.positional.size(); ++i)
    bound_[i] = &arguments.positional[i];
  for (const auto& [name, value] : arguments.keyword) {
    std::size_t index = 0;
    for (std::string_view parameter : names) {
      if (parameter == name) break;
      ++index;
    }
    if (index == names.size())
      fail(cat(callee, " got an unexpected keyword argument '", name, "'"));
    if (bound_[index] != nullptr)
      fail(cat(callee, " got multiple values for argument '", name, "'"));
    bound_[index] = &value;
  }
}

}  // namespace lpx::core::jinja
