// The global functions a template can call: Jinja2's range, dict, namespace, cycler and joiner,
// and the Hugging Face additions raise_exception(message) and strftime_now(format).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "chat_template/arguments.hpp"
#include "chat_template/value.hpp"

namespace lpx::core::jinja {

// A callable implemented in C++.
class NativeFunction final : public Object {
 public:
  using Function = std::function<Value(Renderer&, const CallArguments&)>;
  // `depth`: see Object::depth(); more than 1 when `function` holds values.
  NativeFunction(std::string name, Function function, int depth = 1)
      : name_(std::move(name)), function_(std::move(function)), depth_(depth) {}

  std::string type_name() const override { return "function"; }
  std::string repr() const override { return "<function " + name_ + ">"; }
  bool callable() const override { return true; }
  Value call(Renderer& renderer, const CallArguments& arguments) const override {
    return function_(renderer, arguments);
  }
  int depth() const override { return depth_; }

 private:
  std::string name_;
  Function function_;
  int depth_;
};

// The global named `name`, or nullptr.
const Value* find_global(std::string_view name);

}  // namespace lpx::core::jinja
