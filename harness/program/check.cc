// check.cc: the static pass over a parsed program: callee resolution,
// names_used / ops_called, and type checking with unknowns (inputs and
// item() results), so a spec reports what cannot work before it runs.
#include <map>
#include <set>

#include "harness/program/parser.h"
#include "harness/program/resolve.h"

namespace opspec::internal::prog {
namespace {

bool has_unknown(const Ty& t) {
  if (t.kind == Ty::Kind::kUnknown || t.kind == Ty::Kind::kNumber) return true;
  for (const Ty& e : t.items) {
    if (has_unknown(e)) return true;
  }
  return false;
}

class Checker {
 public:
  Checker(ProgramImpl* p, LexError* error) : p_(*p), error_(error) {}

  bool run() {
    for (Stmt& s : p_.stmts) {
      if (!stmt(s)) return false;
    }
    return true;
  }

 private:
  bool fail(Pos pos, std::string message) {
    error_->pos = pos;
    error_->message = std::move(message);
    return false;
  }

  bool stmt(Stmt& s) {
    if (s.kind == StmtKind::kWith) {  // names assigned in the body stay bound after it, as in Python
      for (Stmt& b : s.body) {
        if (!stmt(b)) return false;
      }
      return true;
    }
    std::vector<Ty> values;
    for (Expr& e : s.values) {
      Ty t;
      if (!expr(e, &t)) return false;
      values.push_back(std::move(t));
    }
    if (s.kind != StmtKind::kAssign) return true;
    const Ty& v = values[0];
    if (s.targets.size() == 1) {
      env_[s.targets[0]] = v;
      return true;
    }
    const size_t n = s.targets.size();
    if (v.kind == Ty::Kind::kTuple || v.kind == Ty::Kind::kList) {
      if (v.items.size() != n) return fail(s.pos, unpack_message(n, v.items.size()));
      for (size_t i = 0; i < n; ++i) env_[s.targets[i]] = v.items[i];
      return true;
    }
    if (v.kind != Ty::Kind::kUnknown) {
      return fail(s.pos, str_cat("cannot unpack a non-sequence ", type_name(v), " into ", n, " names"));
    }
    for (const std::string& t : s.targets) env_[t] = Ty{};
    return true;
  }

  bool expr(Expr& e, Ty* out) {
    *out = Ty{};
    switch (e.kind) {
      case ExprKind::kName: {
        auto it = env_.find(e.text);
        if (it != env_.end()) {
          *out = it->second;
        } else if (inputs_.insert(e.text).second) {
          p_.names_used.push_back(e.text);
          p_.names_used_pos.push_back(e.pos);
        }
        return true;
      }
      case ExprKind::kInt: out->kind = Ty::Kind::kInt; return true;
      case ExprKind::kFloat: out->kind = Ty::Kind::kFloat; return true;
      case ExprKind::kBool: out->kind = Ty::Kind::kBool; return true;
      case ExprKind::kNone: out->kind = Ty::Kind::kNone; return true;
      case ExprKind::kString: out->kind = Ty::Kind::kStr; return true;
      case ExprKind::kDType: out->kind = Ty::Kind::kDType; return true;
      case ExprKind::kLayout: out->kind = Ty::Kind::kLayout; return true;
      case ExprKind::kMemoryFormat: out->kind = Ty::Kind::kMemoryFormat; return true;
      case ExprKind::kList: {
        out->kind = Ty::Kind::kList;
        for (Expr& item : e.items) {
          Ty t;
          if (!expr(item, &t)) return false;
          out->items.push_back(std::move(t));
        }
        return true;
      }
      case ExprKind::kNeg: {
        Ty t;
        if (!expr(e.items[0], &t)) return false;
        switch (t.kind) {
          case Ty::Kind::kUnknown: return true;
          case Ty::Kind::kInt:
          case Ty::Kind::kFloat:
          case Ty::Kind::kNumber: *out = t; return true;
          case Ty::Kind::kBool: out->kind = Ty::Kind::kInt; return true;
          default: return fail(e.pos, neg_message(type_name(t)));
        }
      }
      case ExprKind::kCall: return call(e, out);
    }
    return true;
  }

  bool call(Expr& e, Ty* out) {
    auto [it, inserted] = callee_index_.try_emplace(e.text, static_cast<int>(p_.callees.size()));
    if (inserted) {
      Callee c;
      std::string message;
      if (!lookup_callee(e.text, &c, &message)) return fail(e.pos, message);
      c.pos = e.pos;
      p_.callees.push_back(std::move(c));
      p_.ops_called.push_back(e.text);
    }
    e.callee = it->second;
    std::vector<ArgView> args;
    std::vector<KwView> kwargs;
    for (Expr& a : e.items) {
      ArgView v{Ty{}, a.pos};
      if (!expr(a, &v.ty)) return false;
      args.push_back(std::move(v));
    }
    for (Kwarg& k : e.kwargs) {
      KwView v{k.name, k.name_pos, Ty{}, k.value.pos};
      if (!expr(k.value, &v.ty)) return false;
      kwargs.push_back(std::move(v));
    }
    // Only now: checking the arguments may add callees (and move the vector).
    const Callee& callee = p_.callees[static_cast<size_t>(e.callee)];
    if (callee.kind == Callee::Kind::kBuiltin && callee.builtin == BuiltinId::kTensor) {
      if (!args.empty()) args[0].ty = flatten_tensor_data_type(args[0].ty);
      for (KwView& k : kwargs) {
        if (k.name == "data") k.ty = flatten_tensor_data_type(k.ty);
      }
    }
    Binding b;
    MatchError me;
    if (!resolve_call(callee, e.pos, args, kwargs, &b, &me)) return fail(me.pos, me.message);
    if (callee.kind == Callee::Kind::kFixture) return true;  // its result count is known only once it runs
    bool known = true;
    for (const ArgView& a : args) known = known && !has_unknown(a.ty);
    for (const KwView& k : kwargs) known = known && !has_unknown(k.ty);
    if (known) {
      *out = return_type(callee.candidates[static_cast<size_t>(b.candidate)].schema);
      return true;
    }
    // Unknown argument types: the result type only when every candidate agrees.
    *out = return_type(callee.candidates[0].schema);
    for (const Candidate& c : callee.candidates) {
      if (!(return_type(c.schema) == *out)) {
        *out = Ty{};
        break;
      }
    }
    return true;
  }

  ProgramImpl& p_;
  LexError* error_;
  std::map<std::string, Ty> env_;
  std::set<std::string> inputs_;
  std::map<std::string, int> callee_index_;
};

}  // namespace

std::string unpack_message(size_t expected, size_t got) {
  return str_cat(got > expected ? "too many" : "not enough", " values to unpack (expected ", expected, ", got ",
                 got, ")");
}

std::string neg_message(const std::string& type) {
  return str_cat("bad operand type for unary -: '", type, "'", type == "Tensor" ? " (use neg(x) for tensors)" : "");
}

bool analyze(ProgramImpl* program, LexError* error) { return Checker(program, error).run(); }

}  // namespace opspec::internal::prog
