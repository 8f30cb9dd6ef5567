// Mirrors jinja2/idtracking.py: each scope records, per name, how its variable is initialised on
// entry (a parameter, resolved from the context, aliased to the enclosing scope's variable, or
// undefined); `if` branches are analysed separately and merged.
#include "chat_template/scope_analysis.hpp"

#include <map>
#include <set>

namespace lpx::core::jinja {
namespace {

enum class Load { kParameter, kResolve, kAlias, kUndefined };

struct Symbols {
  const Symbols* parent = nullptr;
  std::map<std::string, Load> refs;  // the names this scope has its own variable for
  std::set<std::string> stores;

  bool knows(const std::string& name) const {
    for (const Symbols* scope = this; scope != nullptr; scope = scope->parent) {
      if (scope->refs.count(name) != 0) return true;
    }
    return false;
  }
  bool parent_knows(const std::string& name) const {
    return parent != nullptr && parent->knows(name);
  }

  void load(const std::string& name) {
    if (!knows(name)) refs[name] = Load::kResolve;
  }
  void store(const std::string& name) {
    stores.insert(name);
    if (refs.count(name) == 0) refs[name] = parent_knows(name) ? Load::kAlias : Load::kUndefined;
  }
  void declare_parameter(const std::string& name) {
    stores.insert(name);
    refs[name] = Load::kParameter;
  }
  // A name assigned in some branches but not all keeps its outside value in the others.
  void merge_branches(const std::vector<Symbols>& branches) {
    std::map<std::string, std::size_t> assigned_in;
    for (const Symbols& branch : branches) {
      for (const std::string& name : branch.stores) {
        if (stores.count(name) == 0) ++assigned_in[name];
      }
    }
    for (const Symbols& branch : branches) {
      for (const auto& [name, load] : branch.refs) refs[name] = load;
      stores.insert(branch.stores.begin(), branch.stores.end());
    }
    for (const auto& [name, count] : assigned_in) {
      if (count != branches.size()) refs[name] = parent_knows(name) ? Load::kAlias : Load::kResolve;
    }
  }
};

void load_names(const Expression* expression, Symbols& symbols);

void load_call_names(const CallSyntax& call, Symbols& symbols) {
  for (const ExpressionPtr& argument : call.positional) load_names(argument.get(), symbols);
  for (const auto& keyword : call.keyword) load_names(keyword.second.get(), symbols);
}

// Every name an expression reads.
void load_names(const Expression* expression, Symbols& symbols) {
  if (expression == nullptr) return;
  switch (expression->kind) {
    case ExpressionKind::kLiteral: return;
    case ExpressionKind::kName:
      symbols.load(static_cast<const NameExpression&>(*expression).name);
      return;
    case ExpressionKind::kList:
      for (const ExpressionPtr& item : static_cast<const ListExpression&>(*expression).items) {
        load_names(item.get(), symbols);
      }
      return;
    case ExpressionKind::kDict:
      for (const auto& [key, value] : static_cast<const DictExpression&>(*expression).entries) {
        load_names(key.get(), symbols);
        load_names(value.get(), symbols);
      }
      return;
    case ExpressionKind::kAttribute:
      load_names(static_cast<const AttributeExpression&>(*expression).object.get(), symbols);
      return;
    case ExpressionKind::kSubscript: {
      const auto& subscript = static_cast<const SubscriptExpression&>(*expression);
      load_names(subscript.object.get(), symbols);
      load_names(subscript.index.get(), symbols);
      return;
    }
    case ExpressionKind::kSlice: {
      const auto& slice = static_cast<const SliceExpression&>(*expression);
      load_names(slice.object.get(), symbols);
      load_names(slice.start.get(), symbols);
      load_names(slice.stop.get(), symbols);
      load_names(slice.step.get(), symbols);
      return;
    }
    case ExpressionKind::kCall: {
      const auto& call = static_cast<const CallExpression&>(*expression);
      load_names(call.callee.get(), symbols);
      load_call_names(call.arguments, symbols);
      return;
    }
    case ExpressionKind::kFilter: {
      const auto& filter = static_cast<const FilterExpression&>(*expression);
      load_names(filter.input.get(), symbols);
      load_call_names(filter.arguments, symbols);
      return;
    }
    case ExpressionKind::kTest: {
      const auto& test = static_cast<const TestExpression&>(*expression);
      load_names(test.input.get(), symbols);
      load_call_names(test.arguments, symbols);
      return;
    }
    case ExpressionKind::kUnary:
      load_names(static_cast<const UnaryExpression&>(*expression).operand.get(), symbols);
      return;
    case ExpressionKind::kBinary: {
      const auto& binary = static_cast<const BinaryExpression&>(*expression);
      load_names(binary.left.get(), symbols);
      load_names(binary.right.get(), symbols);
      return;
    }
    case ExpressionKind::kCompare: {
      const auto& comparison = static_cast<const CompareExpression&>(*expression);
      load_names(comparison.first.get(), symbols);
      for (const auto& operand : comparison.rest) load_names(operand.second.get(), symbols);
      return;
    }
    case ExpressionKind::kConditional: {
      const auto& conditional = static_cast<const ConditionalExpression&>(*expression);
      load_names(conditional.then.get(), symbols);
      load_names(conditional.condition.get(), symbols);
      load_names(conditional.otherwise.get(), symbols);
      return;
    }
  }
}

void assign_names(const AssignTarget& target, Symbols& symbols) {
  if (!target.attribute.empty()) {
    symbols.load(target.names[0]);  // ns.attr = ... reads ns
    return;
  }
  for (const std::string& name : target.names) symbols.store(name);
}

class Analyzer {
 public:
  BlockLocals run(const Body& template_body) {
    analyze_scope(template_body, nullptr, {});
    return std::move(result_);
  }

 private:
  // Analyses one scope's own statements, records its undefined-on-entry names, then analyses the
  // scopes nested in it, whose parent it is.
  void analyze_scope(const Body& body, const Symbols* parent,
                     const std::vector<std::string>& parameters,
                     const std::vector<const Expression*>& own_expressions = {}) {
    Symbols symbols;
    symbols.parent = parent;
    for (const std::string& parameter : parameters) symbols.declare_parameter(parameter);
    for (const Expression* expression : own_expressions) load_names(expression, symbols);
    std::vector<const Statement*> nested;
    visit_body(body, symbols, nested);
    std::vector<std::string> undefined;
    for (const auto& [name, load] : symbols.refs) {
      if (load == Load::kUndefined) undefined.push_back(name);
    }
    if (!undefined.empty()) result_[&body] = std::move(undefined);
    for (const Statement* statement : nested) analyze_nested(*statement, symbols);
  }

  void visit_body(const Body& body, Symbols& symbols, std::vector<const Statement*>& nested) {
    for (const StatementPtr& statement : body) visit(*statement, symbols, nested);
  }

  // What a statement does in the scope it appears in; statements with scopes of their own are
  // collected in `nested` for later.
  void visit(const Statement& statement, Symbols& symbols, std::vector<const Statement*>& nested) {
    switch (statement.kind) {
      case StatementKind::kOutput:
        load_names(static_cast<const OutputStatement&>(statement).expression.get(), symbols);
        return;
      case StatementKind::kIf:
        visit_if(static_cast<const IfStatement&>(statement), symbols, nested);
        return;
      case StatementKind::kFor:
        load_names(static_cast<const ForStatement&>(statement).iterable.get(), symbols);
        nested.push_back(&statement);
        return;
      case StatementKind::kSet: {
        const auto& set = static_cast<const SetStatement&>(statement);
        load_names(set.value.get(), symbols);
        assign_names(set.target, symbols);
        return;
      }
      case StatementKind::kSetBlock: {
        const auto& set = static_cast<const SetBlockStatement&>(statement);
        load_names(set.filter.get(), symbols);
        assign_names(set.target, symbols);
        nested.push_back(&statement);
        return;
      }
      case StatementKind::kMacro:
        symbols.store(static_cast<const MacroStatement&>(statement).name);
        nested.push_back(&statement);
        return;
      case StatementKind::kFilterBlock:
        load_names(static_cast<const FilterBlockStatement&>(statement).filter.get(), symbols);
        nested.push_back(&statement);
        return;
      case StatementKind::kWith:
        for (const auto& assignment : static_cast<const WithStatement&>(statement).assignments) {
          load_names(assignment.second.get(), symbols);
        }
        nested.push_back(&statement);
        return;
      case StatementKind::kScope: nested.push_back(&statement); return;
      case StatementKind::kText:
      case StatementKind::kBreak:
      case StatementKind::kContinue: return;
    }
  }

  // Like Jinja's If node: three branches (the body, all `elif`s in turn, the `else`), where each
  // `elif` is itself an If with an empty elif and else part.
  void visit_if(const IfStatement& statement, Symbols& symbols,
                std::vector<const Statement*>& nested) {
    load_names(statement.branches[0].first.get(), symbols);
    std::vector<Symbols> branches(3, symbols);
    visit_body(statement.branches[0].second, branches[0], nested);
    for (std::size_t i = 1; i < statement.branches.size(); ++i) {
      Symbols& elifs = branches[1];
      load_names(statement.branches[i].first.get(), elifs);
      std::vector<Symbols> elif_branches(3, elifs);
      visit_body(statement.branches[i].second, elif_branches[0], nested);
      elifs.merge_branches(elif_branches);
    }
    visit_body(statement.otherwise, branches[2], nested);
    symbols.merge_branches(branches);
  }

  void analyze_nested(const Statement& statement, const Symbols& parent) {
    switch (statement.kind) {
      case StatementKind::kFor: {
        const auto& loop = static_cast<const ForStatement&>(statement);
        std::vector<std::string> parameters = loop.target.names;
        parameters.push_back("loop");
        analyze_scope(loop.body, &parent, parameters);
        analyze_scope(loop.otherwise, &parent, {});
        return;
      }
      case StatementKind::kMacro: {
        const auto& macro = static_cast<const MacroStatement&>(statement);
        std::vector<std::string> parameters;
        std::vector<const Expression*> defaults;
        for (const MacroParameter& parameter : macro.parameters) {
          parameters.push_back(parameter.name);
          defaults.push_back(parameter.default_value.get());
        }
        analyze_scope(macro.body, &parent, parameters, defaults);
        return;
      }
      case StatementKind::kWith: {
        const auto& with = static_cast<const WithStatement&>(statement);
        std::vector<std::string> parameters;
        for (const auto& assignment : with.assignments) {
          parameters.insert(parameters.end(), assignment.first.names.begin(),
                            assignment.first.names.end());
        }
        analyze_scope(with.body, &parent, parameters);
        return;
      }
      case StatementKind::kSetBlock:
        analyze_scope(static_cast<const SetBlockStatement&>(statement).body, &parent, {});
        return;
      case StatementKind::kFilterBlock:
        analyze_scope(static_cast<const FilterBlockStatement&>(statement).body, &parent, {});
        return;
      case StatementKind::kScope:
        analyze_scope(static_cast<const ScopeStatement&>(statement).body, &parent, {});
        return;
      default: return;
    }
  }

  BlockLocals result_;
};

}  // namespace

BlockLocals analyze_block_locals(const Body& template_body) {
  return Analyzer().run(template_body);
}

}  // namespace lpx::core::jinja
