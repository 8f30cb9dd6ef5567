// The template engine's data model: Python's values as Jinja2 sees them.
//
// Lists and dicts are immutable once built (the Hugging Face environment is an
// ImmutableSandboxedEnvironment: list.append and dict.update are refused), so they are shared
// between values without copying. Namespaces and cyclers are the only mutable values a template
// can create (Object subclasses).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <boost/json/fwd.hpp>

namespace lpx::core::jinja {

class Value;
class Dict;
class Object;
class Renderer;
struct CallArguments;

using ValueList = std::vector<Value>;

// The Python types behind a sequence value. Jinja's map/select/... filters return generators:
// always true, no len(), no indexing; dict.keys()/values()/items() return views.
enum class SequenceKind { kList, kTuple, kGenerator, kDictKeys, kDictValues, kDictItems };

class Value {
 public:
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kObject };

  Value() = default;  // undefined
  // `why` is the message an operation that cannot use an undefined value reports, e.g.
  // "'tools' is undefined" or "'dict object' has no attribute 'content'".
  static Value undefined(std::string why);
  static Value none();
  static Value boolean(bool value);
  static Value integer(std::int64_t value);
  static Value number(double value);
  static Value string(std::string text);  // throws past kMaxStringBytes
  static Value list(ValueList items);
  static Value tuple(ValueList items);
  static Value sequence(ValueList items, SequenceKind kind);
  static Value dict(Dict entries);
  static Value object(std::shared_ptr<Object> object);

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  bool is_undefined() const { return kind() == Kind::kUndefined; }
  bool is_none() const { return kind() == Kind::kNone; }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_int() const { return kind() == Kind::kInt; }
  bool is_float() const { return kind() == Kind::kFloat; }
  bool is_string() const { return kind() == Kind::kString; }
  bool is_sequence() const { return kind() == Kind::kList; }  // any SequenceKind
  bool is_list() const;  // a list or a tuple: indexable, sized, JSON-serializable
  bool is_tuple() const;
  SequenceKind sequence_kind() const;
  bool is_dict() const { return kind() == Kind::kDict; }
  bool is_object() const { return kind() == Kind::kObject; }
  bool is_number() const { return is_bool() || is_int() || is_float(); }  // Python's bool is an int
  bool is_integral() const { return is_bool() || is_int(); }

  bool as_bool() const { return std::get<bool>(data_); }
  std::int64_t as_int() const;  // bool or int
  double as_double() const;     // any number
  const std::string& as_string() const { return *std::get<StringPtr>(data_); }
  const ValueList& as_list() const;  // the items of any sequence
  const Dict& as_dict() const { return *std::get<DictPtr>(data_); }
  Object& as_object() const { return *std::get<ObjectPtr>(data_); }
  const std::shared_ptr<Object>& object_ptr() const { return std::get<ObjectPtr>(data_); }
  std::string undefined_message() const;

  bool truthy() const;
  std::string type_name() const;  // Python's name for the type: "str", "NoneType", "list"...
  // How deeply values nest inside this one (0 for scalars). Lists, dicts and objects deeper than
  // kMaxValueDepth cannot be built, which keeps printing, comparing and destroying them from
  // recursing without bound.
  int depth() const;

 private:
  struct UndefinedData {
    std::shared_ptr<const std::string> why;
  };
  struct NoneData {};
  struct ListData;
  using StringPtr = std::shared_ptr<const std::string>;
  using ListPtr = std::shared_ptr<const ListData>;
  using DictPtr = std::shared_ptr<const Dict>;
  using ObjectPtr = std::shared_ptr<Object>;

  // The alternatives are in Kind order: kind() is the variant's index.
  std::variant<UndefinedData, NoneData, bool, std::int64_t, double, StringPtr, ListPtr, DictPtr,
               ObjectPtr>
      data_;
};

// An insertion-ordered dict, keyed like Python's (1, 1.0 and True are the same key).
class Dict {
 public:
  using Entry = std::pair<Value, Value>;

  const Value* find(const Value& key) const;
  const Value* find(std::string_view key) const;
  // Inserts, or replaces the value of an equal key (which keeps its place and its first spelling).
  // Throws for keys Python cannot hash (lists, dicts).
  void set(Value key, Value value);
  const std::vector<Entry>& entries() const { return entries_; }
  std::vector<Entry> take_entries();  // leaves the dict empty
  int depth() const { return depth_; }
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

 private:
  std::optional<std::size_t> index_of(const Value& key) const;

  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const {
      return std::hash<std::string_view>{}(text);
    }
  };
  std::vector<Entry> entries_;
  std::unordered_map<std::string, std::size_t, StringHash, std::equal_to<>> string_keys_;
  int depth_ = 1;  // an upper bound: replacing a value never lowers it
};

// Values with behaviour: namespaces, loop contexts, macros, built-in functions, bound methods.
class Object {
 public:
  Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  virtual ~Object() = default;

  virtual std::string type_name() const = 0;
  virtual std::string repr() const = 0;  // what printing the object shows
  virtual std::optional<Value> attribute(std::string_view name) const;
  // `{% set object.name = value %}`; only namespaces accept it.
  virtual bool assign_attribute(const std::string& name, Value value);
  virtual bool callable() const { return false; }
  virtual Value call(Renderer& renderer, const CallArguments& arguments) const;
  // See Value::depth(). Mutable objects (namespaces, cyclers) count as 1: the renderer owns them
  // until the render ends and then empties them first (release_contents), so nothing is ever
  // destroyed through them recursively and reference cycles through them cannot leak.
  virtual int depth() const { return 1; }
  virtual void release_contents(ValueList& pile) { static_cast<void>(pile); }
};

// Python's == (never throws except on nesting past kMaxValueDepth).
bool equals(const Value& left, const Value& right, int depth = 0);

enum class CompareOp { kEqual, kNotEqual, kLess, kLessEqual, kGreater, kGreaterEqual };
std::string_view compare_op_symbol(CompareOp op);
// Python's rich comparison; throws TemplateError ("'<' not supported between instances of
// 'int' and 'str'") for types Python cannot order.
bool compare(const Value& left, CompareOp op, const Value& right, int depth = 0);

// Converts request data (JSON) to template values; throws past kMaxValueDepth.
Value from_json(const boost::json::value& json, int depth = 0);

}  // namespace lpx::core::jinja
