// program.cc: Program, ProgramInstance and the interpreter. See Note
// [Program language] in program.h.
#include "harness/program/program.h"

#include <exception>
#include <limits>
#include <map>
#include <set>

#include "absl/status/status.h"
#include "harness/program/parser.h"
#include "harness/program/resolve.h"
#include "runtime/core/call_site.h"
#include "runtime/core/grad_mode.h"
#include "runtime/dispatch/mode.h"

namespace opspec {

namespace internal {
// ProgramFixtures: the fixture programs one instance made, by fixture name.
struct ProgramFixtures {
  std::map<std::string, FixtureFn, std::less<>> fns;
};
}  // namespace internal

namespace {

using namespace internal::prog;  // NOLINT: the interpreter's own types

const internal::ProgramImpl& empty_impl() {
  static const auto* impl = new internal::ProgramImpl();
  return *impl;
}

// Interpreter: one run of a program over its inputs.
class Interpreter {
 public:
  Interpreter(const internal::ProgramImpl& p, const internal::ProgramFixtures& fixtures, const ReturnCheck& check)
      : p_(p), fixtures_(fixtures), check_(check) {}

  std::vector<Value> run(const std::vector<std::pair<std::string, Value>>& inputs) {
    for (const auto& [name, value] : inputs) env_[name] = obj_from_value(value);
    std::vector<Value> out;
    run_block(p_.stmts, &out);
    return out;
  }

 private:
  // run_block: statements in order; a `with` block runs its body under its
  // grad mode (torch.no_grad() / enable_grad()), restored however it ends.
  void run_block(const std::vector<Stmt>& stmts, std::vector<Value>* out) {
    for (const Stmt& s : stmts) {
      // Graph breaks and compile errors name the statement's place in the spec
      // file, not the interpreter's C++ source; and each call its own (call()).
      SiteLabelScope site_scope(s.site);
      switch (s.kind) {
        case StmtKind::kExpr: eval(s.values[0]); break;
        case StmtKind::kAssign: assign(s, eval(s.values[0])); break;
        case StmtKind::kReturn:
          for (const Expr& e : s.values) {
            const Obj v = eval(e);
            if (v.kind == Obj::Kind::kTuple) {
              for (const Obj& item : v.items) out->push_back(returned(item, e.pos));
            } else {
              out->push_back(returned(v, e.pos));
            }
          }
          break;
        case StmtKind::kWith: {
          autograd::AutoGradMode mode(s.grad_enabled);
          run_block(s.body, out);
          break;
        }
      }
    }
  }

  [[noreturn]] void fail(Pos pos, const std::string& message) const {
    throw ProgramError(to_location(p_.origin, pos), message);
  }

  Value returned(const Obj& v, Pos pos) const {
    try {
      Value out = value_from_obj(v);
      if (check_) check_(out);
      return out;
    } catch (const Error& e) {
      fail(pos, e.what());
    }
  }

  void assign(const Stmt& s, Obj v) {
    const size_t n = s.targets.size();
    if (n == 1) {
      env_[s.targets[0]] = std::move(v);
      return;
    }
    if (v.kind != Obj::Kind::kTuple && v.kind != Obj::Kind::kList) {
      fail(s.pos, str_cat("cannot unpack a non-sequence ", type_name(type_of(v)), " into ", n, " names"));
    }
    if (v.items.size() != n) fail(s.pos, unpack_message(n, v.items.size()));
    for (size_t i = 0; i < n; ++i) env_[s.targets[i]] = std::move(v.items[i]);
  }

  Obj eval(const Expr& e) {
    Obj o;
    switch (e.kind) {
      case ExprKind::kName: {
        auto it = env_.find(e.text);
        if (it == env_.end()) fail(e.pos, str_cat("undefined name '", e.text, "'"));
        return it->second;
      }
      case ExprKind::kInt: return obj_from_value(Value(e.ival));
      case ExprKind::kFloat: return obj_from_value(Value(e.dval));
      case ExprKind::kBool: return obj_from_value(Value(e.bval));
      case ExprKind::kNone: return o;
      case ExprKind::kString: return obj_from_value(Value(e.text));
      case ExprKind::kDType: return obj_from_value(Value(e.dtype));
      case ExprKind::kLayout:
      case ExprKind::kMemoryFormat:
        o.kind = e.kind == ExprKind::kLayout ? Obj::Kind::kLayout : Obj::Kind::kMemoryFormat;
        o.value = Value(e.ival);
        return o;
      case ExprKind::kList:
        o.kind = Obj::Kind::kList;
        for (const Expr& item : e.items) o.items.push_back(eval(item));
        return o;
      case ExprKind::kNeg: return negate(eval(e.items[0]), e.pos);
      case ExprKind::kCall: return call(e);
    }
    return o;
  }

  Obj negate(const Obj& v, Pos pos) const {
    switch (v.kind) {
      case Obj::Kind::kInt: {
        const int64_t i = v.value.to_int();
        if (i == std::numeric_limits<int64_t>::min()) fail(pos, "integer overflow in unary -");
        return obj_from_value(Value(-i));
      }
      case Obj::Kind::kBool: return obj_from_value(Value(v.value.to_bool() ? int64_t{-1} : int64_t{0}));
      case Obj::Kind::kFloat: return obj_from_value(Value(-v.value.to_double()));
      default: fail(pos, neg_message(type_name(type_of(v))));
    }
  }

  Obj call(const Expr& e) {
    const Callee& callee = p_.callees.at(static_cast<size_t>(e.callee));
    // A break names the call that made it (`item(...)` on the second line of
    // a statement, the second `sub` on a line), not the statement's start.
    SiteLabelScope site_scope(e.site);
    std::vector<Obj> args, kwargs;
    std::vector<ArgView> arg_views;
    std::vector<KwView> kw_views;
    for (const Expr& a : e.items) {
      args.push_back(eval(a));
      arg_views.push_back({type_of(args.back()), a.pos});
    }
    for (const Kwarg& k : e.kwargs) {
      kwargs.push_back(eval(k.value));
      kw_views.push_back({k.name, k.name_pos, type_of(kwargs.back()), k.value.pos});
    }
    std::optional<SizeVec> inferred_shape;
    if (callee.kind == Callee::Kind::kBuiltin && callee.builtin == BuiltinId::kTensor) {
      auto flatten = [&](Obj& data, Ty& ty, Pos pos) {
        Obj flat;
        SizeVec shape;
        std::string message;
        if (!flatten_tensor_data(data, &flat, &shape, &message)) fail(pos, message);
        data = std::move(flat);
        ty = type_of(data);
        inferred_shape = shape;
      };
      if (!args.empty()) flatten(args[0], arg_views[0].ty, arg_views[0].pos);
      for (size_t k = 0; k < kwargs.size(); ++k) {
        if (kw_views[k].name == "data") flatten(kwargs[k], kw_views[k].ty, kw_views[k].pos);
      }
    }
    Binding b;
    MatchError me;
    if (!resolve_call(callee, e.pos, arg_views, kw_views, &b, &me)) fail(me.pos, me.message);
    Stack stack = build_stack(callee, b, args, kwargs, arg_views, kw_views, p_.origin);
    try {
      switch (callee.kind) {
        case Callee::Kind::kBuiltin: return call_builtin(callee.builtin, stack, inferred_shape);
        case Callee::Kind::kFixture: return call_fixture(callee, stack);
        case Callee::Kind::kOp:
          callee.candidates[static_cast<size_t>(b.candidate)].op->call_boxed(stack);
          return results_obj(stack);
      }
    } catch (const ProgramError&) {
      throw;  // already located (a fixture running a program, say)
    } catch (const std::exception& ex) {
      std::throw_with_nested(ProgramError(to_location(p_.origin, e.pos), ex.what()));
    }
    return Obj{};
  }

  Obj call_fixture(const Callee& callee, const Stack& stack) const {
    auto it = fixtures_.fns.find(callee.name);
    OPSPEC_CHECK(it != fixtures_.fns.end(), "fixture '", callee.name, "' was not instantiated");
    std::vector<Tensor> inputs;
    for (const Value& v : stack) inputs.push_back(v.to_tensor());
    std::vector<Tensor> outputs = it->second(inputs);
    if (outputs.size() == 1) return obj_from_value(Value(std::move(outputs[0])));
    Obj t;
    t.kind = Obj::Kind::kTuple;
    for (Tensor& out : outputs) t.items.push_back(obj_from_value(Value(std::move(out))));
    return t;
  }

  const internal::ProgramImpl& p_;
  const internal::ProgramFixtures& fixtures_;
  const ReturnCheck& check_;
  std::map<std::string, Obj, std::less<>> env_;
};

}  // namespace

std::string SourceLocation::str() const {
  return str_cat(file, ":", line, ":", column, within.empty() ? "" : ": ", within);
}

ProgramError::ProgramError(SourceLocation where, const std::string& message)
    : Error(str_cat(where.str(), ": ", message)), where_(std::move(where)), message_(message) {}

std::vector<std::string> Program::names_used() const { return impl_ ? impl_->names_used : std::vector<std::string>{}; }
std::vector<std::string> Program::ops_called() const { return impl_ ? impl_->ops_called : std::vector<std::string>{}; }
const std::string& Program::source() const { return (impl_ ? *impl_ : empty_impl()).source; }
const ProgramOrigin& Program::origin() const { return (impl_ ? *impl_ : empty_impl()).origin; }

ProgramInstance Program::instantiate() const {
  auto fixtures = std::make_shared<internal::ProgramFixtures>();
  if (impl_) {
    for (const Callee& c : impl_->callees) {
      if (c.kind != Callee::Kind::kFixture || fixtures->fns.contains(c.name)) continue;
      HideUserModesGuard hide;  // parameter creation is set-up, not the program
      try {
        fixtures->fns.emplace(c.name, c.fixture->make());
      } catch (const std::exception& e) {
        std::throw_with_nested(ProgramError(to_location(impl_->origin, c.pos), e.what()));
      }
    }
  }
  return ProgramInstance(*this, std::move(fixtures));
}

std::vector<Value> Program::run(const std::vector<std::pair<std::string, Value>>& inputs) const {
  return instantiate().run(inputs);
}

std::vector<Value> ProgramInstance::run(const std::vector<std::pair<std::string, Value>>& inputs,
                                        const ReturnCheck& check) const {
  const internal::ProgramImpl& impl = program_.impl_ ? *program_.impl_ : empty_impl();
  return Interpreter(impl, *fixtures_, check).run(inputs);
}

namespace {
// label_sites: each statement's and call's "file:line:col", made once here
// rather than at every run (the interpreter names its site for every call).
void label_sites(internal::ProgramImpl& p) {
  std::vector<Expr*> pending;
  std::vector<Stmt*> stmts;
  for (Stmt& s : p.stmts) stmts.push_back(&s);
  while (!stmts.empty()) {  // `with` bodies nest at most kMaxDepth deep, but a worklist needs no bound
    Stmt& s = *stmts.back();
    stmts.pop_back();
    s.site = to_location(p.origin, s.pos).str();
    for (Expr& e : s.values) pending.push_back(&e);
    for (Stmt& b : s.body) stmts.push_back(&b);
  }
  while (!pending.empty()) {  // a worklist, not recursion: nesting depth is the user's
    Expr* e = pending.back();
    pending.pop_back();
    if (e->kind == ExprKind::kCall) e->site = to_location(p.origin, e->pos).str();
    for (Expr& item : e->items) pending.push_back(&item);
    for (Kwarg& k : e->kwargs) pending.push_back(&k.value);
  }
}
}  // namespace

absl::StatusOr<Program> parse_program(std::string_view text, const ProgramOrigin& origin) {
  auto impl = std::make_shared<internal::ProgramImpl>();
  impl->source = std::string(text);
  impl->origin = origin;
  LexError error;
  bool ok = false;
  try {
    ok = parse_statements(text, &impl->stmts, &error) && analyze(impl.get(), &error);
  } catch (const std::exception& e) {  // never expected; a bad input must not escape as an exception
    return absl::InternalError(str_cat(to_location(origin, Pos{1, 1}).str(), ": internal error: ", e.what()));
  }
  if (!ok) return absl::InvalidArgumentError(str_cat(to_location(origin, error.pos).str(), ": ", error.message));
  label_sites(*impl);
  Program p;
  p.impl_ = std::move(impl);
  return p;
}

absl::Status check_program(const Program& program, const std::vector<std::string>& input_names) {
  if (!program.impl_) return absl::OkStatus();
  const std::set<std::string> inputs(input_names.begin(), input_names.end());
  const internal::ProgramImpl& p = *program.impl_;
  for (size_t i = 0; i < p.names_used.size(); ++i) {
    if (!inputs.contains(p.names_used[i])) {
      return absl::InvalidArgumentError(
          str_cat(to_location(p.origin, p.names_used_pos[i]).str(), ": undefined name '", p.names_used[i], "'"));
    }
  }
  return absl::OkStatus();
}

bool is_reserved_name(std::string_view name) {
  return name == "return" || name == "with" || internal::prog::literal_name(name, nullptr);
}

}  // namespace opspec
