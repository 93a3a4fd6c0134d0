// resolve.cc: callee lookup, overload order and matching, and the boxed
// arguments of operator calls. See Note [Overload resolution] and
// Note [ops.cc conventions] in resolve.h.
#include "harness/program/resolve.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "absl/strings/str_join.h"
#include "runtime/core/did_you_mean.h"
#include "runtime/dispatch/dispatcher.h"

namespace opspec::internal::prog {
namespace {

// ---- Which overloads Python sees ----

// PyTorch's SKIP_PYTHON_BINDINGS_SIGNATURES: C++-only Scalar overloads,
// covered in Python by the .Tensor overload taking a wrapped number.
constexpr std::string_view kHiddenOverloads[] = {
    "aten::add.Scalar", "aten::add_.Scalar", "aten::sub.Scalar", "aten::sub_.Scalar",
    "aten::mul.Scalar", "aten::mul_.Scalar", "aten::div.Scalar", "aten::div_.Scalar",
};

// PyTorch's should_allow_numbers_as_tensors, plus where (see Note [Overload resolution]).
constexpr std::string_view kNumbersAsTensors[] = {
    "add", "add_", "div", "div_", "divide", "divide_", "mul", "mul_", "multiply", "multiply_",
    "sub", "sub_", "subtract", "subtract_", "true_divide", "true_divide_", "to", "_to_copy", "copy_",
    "floor_divide", "floor_divide_", "where",
};

// Note [The out= parameter in overload errors]
// PyTorch's Python signatures of an op with an out variant end in `Tensor out`
// (`round(Tensor input, *, int decimals, Tensor out)`), and PythonArgParser
// counts it when it picks the one overload plausible by argument count whose
// own error it reports: `round(x, 1)` fits both of round's signatures (1 to 2
// and 2 to 3 arguments), so PyTorch reports the invalid combination, not
// round.decimals' keyword-only decimals. opspec registers no out variants; a
// candidate counts the parameter where PyTorch's signature has it: an
// overload that writes nothing and returns no view, except those below
// (checked against torch 1.13's signatures, which 2.x keeps).
constexpr std::string_view kNoPythonOut[] = {
    "aten::sum", "aten::mean", "aten::max", "aten::min", "aten::prod", "aten::masked_fill.Scalar",
    "aten::masked_fill.Tensor", "aten::bernoulli.p", "aten::upsample_nearest2d.vec",
};

template <size_t N>
bool contains(const std::string_view (&list)[N], std::string_view s) {
  return std::find(std::begin(list), std::end(list), s) != std::end(list);
}

// Fill: a parameter a public C++ function fills when the caller gives none
// (see Note [ops.cc conventions]).
enum class Fill : uint8_t { kNone, kSelfDType, kSelfDevice, kCpu, kFalse, kStrided };

struct ArgRule {
  std::string_view op;
  std::string_view arg;
  Fill fill;
};
// kArgRules: per-op bindings of public functions that do more than pass their arguments.
constexpr ArgRule kArgRules[] = {
    {"aten::to.device", "dtype", Fill::kSelfDType},  // ops::to(x, device, dtype = x.dtype())
};

Fill fill_of(const Candidate& c, size_t i) {
  if (c.op == nullptr) return Fill::kNone;
  const FunctionSchema& s = c.schema;
  const std::string& name = s.arguments()[i].name;
  for (const ArgRule& r : kArgRules) {
    if (r.op == s.qualified_name() && r.arg == name) return r.fill;
  }
  if (c.op->kind() != OpKind::kFactory) return Fill::kNone;
  const bool like = !s.arguments().empty() && s.arguments()[0].type.kind == TypeKind::kTensor &&
                    !s.arguments()[0].type.is_list;
  if (name == "pin_memory") return Fill::kFalse;
  if (name == "device") return like ? Fill::kSelfDevice : Fill::kCpu;
  if (like && name == "dtype") return Fill::kSelfDType;
  if (like && name == "layout") return Fill::kStrided;
  return Fill::kNone;
}

// ---- PyTorch's overload order ----

// signature_text: the sort key (the arguments as the schema spells them).
std::string signature_text(const FunctionSchema& s) {
  std::string out;
  for (size_t i = 0; i < s.arguments().size(); ++i) {
    if (i > 0) out += ", ";
    if (static_cast<int>(i) == s.num_positional()) out += "*, ";
    out += s.arguments()[i].str();
  }
  return out;
}

bool is_arg_smaller(const std::string& t1, const std::string& t2) {
  return (t1 == "Scalar" && t2 == "Tensor") || (t1 == "Scalar?" && t2 == "Tensor?") ||
         (t1 == "int[]" && (t2 == "int" || t2 == "int?")) ||
         (t1 == "Tensor[]" && t2.find("[]") != std::string::npos) || (t1 == "int" && t2 == "Tensor");
}

// is_smaller: s1 has lower priority than s2 (same arity, each argument the
// same type or a "smaller" one, not all the same).
bool is_smaller(const FunctionSchema& s1, const FunctionSchema& s2) {
  const auto& a1 = s1.arguments();
  const auto& a2 = s2.arguments();
  if (a1.size() != a2.size()) return false;
  bool all_equal = true;
  for (size_t i = 0; i < a1.size(); ++i) {
    const std::string t1 = a1[i].type.str(), t2 = a2[i].type.str();
    if (t1 == t2) continue;
    all_equal = false;
    if (!is_arg_smaller(t1, t2)) return false;
  }
  return !all_equal;
}

void order_candidates(std::vector<Candidate>& cands) {
  std::stable_sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
    return signature_text(a.schema) < signature_text(b.schema);
  });
  // Topological order of the "smaller than" relation, larger (preferred) first.
  const size_t n = cands.size();
  std::vector<std::set<size_t>> larger_than(n);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (is_smaller(cands[i].schema, cands[j].schema)) larger_than[i].insert(j);
    }
  }
  std::vector<size_t> order;
  std::vector<bool> placed(n, false);
  for (size_t i = 0; i < n; ++i) {
    if (larger_than[i].empty()) {
      order.push_back(i);
      placed[i] = true;
    }
  }
  for (size_t k = 0; k < order.size(); ++k) {
    for (size_t j = 0; j < n; ++j) {
      if (placed[j]) continue;
      larger_than[j].erase(order[k]);
      if (larger_than[j].empty()) {
        order.push_back(j);
        placed[j] = true;
      }
    }
  }
  for (size_t j = 0; j < n; ++j) {
    if (!placed[j]) order.push_back(j);  // a cycle cannot happen; keep every overload anyway
  }
  std::vector<Candidate> sorted;
  for (size_t i : order) sorted.push_back(std::move(cands[i]));
  cands = std::move(sorted);
}

// ---- Lookup ----

Candidate op_candidate(const OperatorHandle& op) {
  Candidate c;
  c.schema = op.schema();
  c.op = &op;
  c.numbers_as_tensors = op.schema().ns() == "aten" && contains(kNumbersAsTensors, op.schema().name());
  return c;
}

bool hidden(const OperatorHandle& op, const std::vector<const OperatorHandle*>& siblings) {
  if (!contains(kHiddenOverloads, op.name())) return false;
  return std::any_of(siblings.begin(), siblings.end(),
                     [](const OperatorHandle* s) { return s->schema().overload() == "Tensor"; });
}

std::string suggestion(std::string_view name) {
  if (max_suggestion_edits(name) == 0) return "";  // skip gathering names
  std::vector<std::string> names;
  for (std::string_view b : builtin_names()) names.emplace_back(b);
  for (const Fixture* f : list_fixtures()) names.push_back(f->name);
  for (const OperatorHandle* op : Dispatcher::singleton().ops()) {
    const FunctionSchema& s = op->schema();
    names.push_back(s.ns() == "aten" ? s.name() : s.base_name());
  }
  return did_you_mean(name, names);
}

bool fixture_callee(const Fixture& f, Callee* out) {
  std::vector<std::string> params;
  for (size_t i = 0; i < f.inputs.size(); ++i) {
    const std::string& n = f.inputs[i].name;
    const bool ok = !n.empty() && (std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_') &&
                    std::all_of(n.begin(), n.end(), [](char c) {
                      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                    });
    params.push_back(str_cat("Tensor ", ok ? n : str_cat("input", i)));
  }
  Candidate c;
  try {
    c.schema = FunctionSchema::parse(str_cat(f.name, "(", absl::StrJoin(params, ", "), ") -> Tensor[]"), "fixture");
  } catch (const Error&) {
    return false;
  }
  out->kind = Callee::Kind::kFixture;
  out->fixture = &f;
  out->candidates.push_back(std::move(c));
  return true;
}

// ---- Matching ----

bool is_numberish(Ty::Kind k) {
  return k == Ty::Kind::kInt || k == Ty::Kind::kFloat || k == Ty::Kind::kBool || k == Ty::Kind::kNumber;
}

bool accepts(const ArgType& t, const Ty& ty, bool numbers_as_tensors, int* bad_element) {
  using K = Ty::Kind;
  if (ty.kind == K::kUnknown) return true;
  if (ty.kind == K::kNone) return false;  // None is decided by the caller (allow_none)
  if (t.is_list) {
    if (ty.kind == K::kList || ty.kind == K::kTuple) {
      const ArgType elem{t.kind};
      for (size_t i = 0; i < ty.items.size(); ++i) {
        const Ty& e = ty.items[i];
        if (t.element_optional && e.kind == K::kNone) continue;  // Tensor?[]: None entries are `:`
        const bool ok = t.kind == TypeKind::kFloat ? (e.kind == K::kUnknown || is_numberish(e.kind))
                                                    : accepts(elem, e, false, nullptr);
        if (!ok) {
          if (bad_element != nullptr) *bad_element = static_cast<int>(i);
          return false;
        }
      }
      return true;
    }
    return t.kind == TypeKind::kInt && t.list_size > 0 && (ty.kind == K::kInt || ty.kind == K::kNumber);
  }
  switch (t.kind) {
    case TypeKind::kTensor: return ty.kind == K::kTensor || (numbers_as_tensors && is_numberish(ty.kind));
    case TypeKind::kScalar:
    case TypeKind::kFloat: return is_numberish(ty.kind);
    case TypeKind::kInt: return ty.kind == K::kInt || ty.kind == K::kNumber;
    case TypeKind::kBool: return ty.kind == K::kBool || ty.kind == K::kNumber;
    case TypeKind::kString: return ty.kind == K::kStr;
    case TypeKind::kScalarType: return ty.kind == K::kDType;
    case TypeKind::kDevice: return ty.kind == K::kStr || ty.kind == K::kDevice;
    case TypeKind::kLayout: return ty.kind == K::kLayout;
    case TypeKind::kMemoryFormat: return ty.kind == K::kMemoryFormat;
    case TypeKind::kGenerator: return false;
  }
  return false;
}

// param_type_name: a parameter's type as PyTorch's messages name it.
std::string param_type_name(const ArgType& t) {
  static constexpr std::string_view kNames[] = {"Tensor", "Number", "int", "float", "bool", "str",
                                                "torch.dtype", "torch.device", "torch.layout",
                                                "torch.memory_format", "torch.Generator"};
  const std::string base(kNames[static_cast<int>(t.kind)]);
  if (!t.is_list) return base;
  return str_cat("tuple of ", base == "Number" ? "Scalars" : str_cat(base, "s"));
}

// has_python_out: PyTorch's Python signature of c ends in `Tensor out`. See Note [The out= parameter in overload errors].
bool has_python_out(const Candidate& c) {
  if (c.op == nullptr || c.schema.ns() != "aten" || c.schema.is_mutable() || c.schema.returns().empty()) return false;
  for (const Argument& r : c.schema.returns()) {
    if (!r.alias_set.empty()) return false;  // a view
  }
  return !contains(kNoPythonOut, c.op->name());
}

bool is_optional_param(const Candidate& c, size_t i) {
  return c.schema.arguments()[i].default_value.has_value() || fill_of(c, i) != Fill::kNone;
}
bool allows_none(const Candidate& c, size_t i) {
  const Argument& a = c.schema.arguments()[i];
  return a.type.is_optional || (a.default_value && a.default_value->is_none()) || fill_of(c, i) != Fill::kNone;
}

// try_match: FunctionSignature::parse for one candidate.
bool try_match(const Candidate& c, const std::string& fname, Pos call_pos, const std::vector<ArgView>& args,
               const std::vector<KwView>& kwargs, Binding* out, MatchError* error) {
  const auto& params = c.schema.arguments();
  const size_t max_pos = static_cast<size_t>(c.schema.num_positional());
  const size_t nargs = args.size();
  const bool varargs = max_pos == 1 && params[0].type.is_list && params[0].type.kind == TypeKind::kInt;
  auto extra_args = [&](size_t at) {
    // As Python's count: the positional parameters without a default (a
    // required keyword-only one, round's decimals, is not among them).
    size_t min_args = 0;
    for (size_t i = 0; i < max_pos; ++i) min_args += is_optional_param(c, i) ? 0 : 1;
    error->pos = args[at].pos;
    error->message = min_args != max_pos
                         ? str_cat(fname, "() takes from ", min_args, " to ", max_pos,
                                   " positional arguments but ", nargs, " were given")
                         : str_cat(fname, "() takes ", max_pos, " positional argument", max_pos == 1 ? "" : "s",
                                   " but ", nargs, nargs == 1 ? " was" : " were", " given");
    return false;
  };
  if (nargs > max_pos && !varargs) return extra_args(max_pos);
  // As Python: a keyword no parameter has is the error, before any missing
  // argument ("softmax() got an unexpected keyword argument 'dimm'", not "missing dim").
  for (const KwView& kw : kwargs) {
    if (c.schema.argument_index(kw.name) >= 0 || (kw.name == "input" && c.schema.argument_index("self") >= 0)) continue;
    std::vector<std::string> names;
    for (const Argument& p : params) names.push_back(p.name);
    error->pos = kw.name_pos;
    error->message = str_cat(fname, "() got an unexpected keyword argument '", shorten(kw.name), "'",
                             did_you_mean(kw.name, names));
    return false;
  }
  out->slots.assign(params.size(), {});
  std::vector<bool> kw_used(kwargs.size(), false);
  size_t arg_pos = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const Argument& p = params[i];
    const Ty* ty = nullptr;
    Pos pos = call_pos;
    Binding::Slot slot;
    if (arg_pos < nargs) {
      if (p.kwarg_only) return extra_args(arg_pos);
      ty = &args[arg_pos].ty;
      pos = args[arg_pos].pos;
      slot = {Binding::Source::kPositional, static_cast<int>(arg_pos)};
    } else {
      for (size_t k = 0; k < kwargs.size(); ++k) {
        if (kwargs[k].name == p.name || (p.name == "self" && kwargs[k].name == "input")) {
          ty = &kwargs[k].ty;
          pos = kwargs[k].pos;
          slot = {Binding::Source::kKeyword, static_cast<int>(k)};
          kw_used[k] = true;
          break;
        }
      }
    }
    int bad_element = -1;
    if (ty == nullptr && is_optional_param(c, i)) {
      // absent: default or fill
    } else if (ty != nullptr && ty->kind == Ty::Kind::kNone && allows_none(c, i)) {
      out->slots[i] = slot;
    } else if (ty == nullptr) {
      std::vector<std::string> missing;
      for (size_t j = i; j < params.size(); ++j) {
        if (!is_optional_param(c, j)) missing.push_back(str_cat("\"", params[j].name, "\""));
      }
      error->pos = call_pos;
      error->message = str_cat(fname, "() missing ", missing.size(), " required positional argument",
                               missing.size() == 1 ? "" : "s", ": ", absl::StrJoin(missing, ", "));
      return false;
    } else if (accepts(p.type, *ty, c.numbers_as_tensors, &bad_element)) {
      out->slots[i] = slot;
    } else if (varargs && i == 0 && slot.source == Binding::Source::kPositional &&
               std::all_of(args.begin(), args.end(), [](const ArgView& a) {
                 return a.ty.kind == Ty::Kind::kInt || a.ty.kind == Ty::Kind::kNumber ||
                        a.ty.kind == Ty::Kind::kUnknown;
               })) {
      out->slots[i] = {Binding::Source::kVarargs, 0};  // zeros(2, 3) is zeros([2, 3])
      arg_pos = nargs;
      continue;
    } else {
      error->pos = pos;
      const std::string where = slot.source == Binding::Source::kKeyword
                                    ? str_cat("argument '", p.name, "'")
                                    : str_cat("argument '", p.name, "' (position ", arg_pos + 1, ")");
      if (bad_element >= 0) {
        error->message = str_cat(fname, "(): ", where, " must be ", param_type_name(p.type),
                                 ", but found element of type ", type_name(ty->items[bad_element]), " at pos ",
                                 bad_element);
      } else {
        error->message =
            str_cat(fname, "(): ", where, " must be ", param_type_name(p.type), ", not ", type_name(*ty));
      }
      return false;
    }
    if (slot.source == Binding::Source::kPositional) ++arg_pos;
  }
  for (size_t k = 0; k < kwargs.size(); ++k) {
    if (kw_used[k]) continue;
    error->pos = kwargs[k].name_pos;
    int idx = c.schema.argument_index(kwargs[k].name);
    if (idx < 0 && kwargs[k].name == "input") idx = c.schema.argument_index("self");
    if (idx >= 0 && out->slots[idx].source == Binding::Source::kPositional) {
      error->message = str_cat(fname, "() got multiple values for argument '", kwargs[k].name, "'");
    } else {
      error->message = str_cat(fname, "() got an unexpected keyword argument '", kwargs[k].name, "'");
    }
    return false;
  }
  return true;
}

std::string candidate_text(const Candidate& c) { return str_cat(c.schema.ns(), "::", c.schema.str()); }

// ---- Conversion ----

Scalar scalar_of(const Obj& o) { return o.value.to_scalar(); }

[[noreturn]] void conversion_error(const ProgramOrigin& origin, Pos pos, const std::string& message) {
  throw ProgramError(to_location(origin, pos), message);
}

Value convert(const ArgType& t, const Obj& o, Pos pos, const ProgramOrigin& origin) {
  using K = Obj::Kind;
  if (o.kind == K::kNone) return Value();
  if (t.is_list) {
    if (o.kind != K::kList && o.kind != K::kTuple) {  // an int for int[N]
      return Value(std::vector<int64_t>(static_cast<size_t>(std::max(t.list_size, 1)), o.value.to_int()));
    }
    switch (t.kind) {
      case TypeKind::kInt: {
        std::vector<int64_t> v;
        for (const Obj& e : o.items) v.push_back(e.value.to_int());
        return Value(std::move(v));
      }
      case TypeKind::kFloat: {
        std::vector<double> v;
        for (const Obj& e : o.items) v.push_back(e.kind == K::kBool ? (e.value.to_bool() ? 1.0 : 0.0) : e.value.to_double());
        return Value(std::move(v));
      }
      case TypeKind::kTensor: {
        std::vector<Tensor> v;
        // Tensor?[]: a None entry is an undefined tensor (See Note [Optional tensor lists]).
        for (const Obj& e : o.items) v.push_back(e.kind == K::kNone && t.element_optional ? Tensor() : e.value.to_tensor());
        return Value(std::move(v));
      }
      default: conversion_error(origin, pos, str_cat("a program cannot pass a list as ", t.str()));
    }
  }
  switch (t.kind) {
    case TypeKind::kTensor:
      if (o.kind == K::kTensor) return o.value;
      return Value(make_wrapped_number(scalar_of(o)));
    case TypeKind::kFloat:
      return Value(o.kind == K::kBool ? (o.value.to_bool() ? 1.0 : 0.0) : o.value.to_double());
    case TypeKind::kDevice:
      if (o.kind == K::kDevice) return o.value;
      try {
        return Value(Device::parse(o.value.to_string()));
      } catch (const Error&) {
        conversion_error(origin, pos, str_cat("invalid device '", o.value.to_string(), "' (expected cpu, meta, cuda or cuda:N)"));
      }
    default: return o.value;  // Scalar, int, bool, str, dtype, layout, memory format: already the right Value
  }
}

}  // namespace

SourceLocation to_location(const ProgramOrigin& origin, Pos pos) {
  SourceLocation loc;
  loc.file = origin.file;
  if (!origin.unmapped.empty()) {  // the text's start, then the program's own position
    loc.line = origin.first_line;
    loc.column = origin.column_offset + 1;
    loc.within = str_cat("in the program (", origin.unmapped, ") at ", pos.line, ":", pos.col);
    return loc;
  }
  loc.line = origin.first_line + pos.line - 1;
  loc.column = pos.col + origin.column_offset;
  return loc;
}

bool lookup_callee(std::string_view name, Callee* out, std::string* error) {
  out->name = std::string(name);
  out->candidates.clear();
  BuiltinId id;
  if (find_builtin(name, &id)) {
    out->kind = Callee::Kind::kBuiltin;
    out->builtin = id;
    out->candidates.push_back(Candidate{builtin_schema(id)});
    return true;
  }
  if (const Fixture* f = find_fixture(name); f != nullptr && fixture_callee(*f, out)) return true;
  out->kind = Callee::Kind::kOp;
  const Dispatcher& d = Dispatcher::singleton();
  const size_t colons = name.find("::");
  const std::string_view rest = colons == std::string_view::npos ? name : name.substr(colons + 2);
  if (rest.find('.') != std::string_view::npos) {  // an exact overload; `.default` names the unnamed one
    std::string qualified = colons == std::string_view::npos ? str_cat("aten::", name) : std::string(name);
    if (qualified.ends_with(".default")) qualified.resize(qualified.size() - 8);
    if (const OperatorHandle* op = d.find(qualified); op != nullptr && op->name() == qualified) {
      out->candidates.push_back(op_candidate(*op));
      return true;
    }
    *error = str_cat("unknown op '", shorten(name), "'", suggestion(name));
    return false;
  }
  std::map<std::string, std::vector<const OperatorHandle*>> by_ns;
  for (const OperatorHandle* op : d.ops()) {
    const FunctionSchema& s = op->schema();
    if (s.name() != rest) continue;
    if (colons != std::string_view::npos && s.ns() != name.substr(0, colons)) continue;
    by_ns[s.ns()].push_back(op);
  }
  const std::vector<const OperatorHandle*>* chosen = nullptr;
  if (auto it = by_ns.find("aten"); it != by_ns.end() && colons == std::string_view::npos) {
    chosen = &it->second;
  } else if (by_ns.size() == 1) {
    chosen = &by_ns.begin()->second;
  } else if (by_ns.size() > 1) {
    std::vector<std::string> options;
    for (const auto& [ns, ops] : by_ns) options.push_back(str_cat(ns, "::", rest));
    *error = str_cat("ambiguous op '", name, "': qualify it as one of ", absl::StrJoin(options, ", "));
    return false;
  }
  if (chosen == nullptr) {
    *error = str_cat("unknown op '", shorten(name), "'", suggestion(name));
    return false;
  }
  for (const OperatorHandle* op : *chosen) {
    if (!hidden(*op, *chosen)) out->candidates.push_back(op_candidate(*op));
  }
  order_candidates(out->candidates);
  return true;
}

bool resolve_call(const Callee& callee, Pos call_pos, const std::vector<ArgView>& args,
                  const std::vector<KwView>& kwargs, Binding* out, MatchError* error) {
  const auto& cands = callee.candidates;
  if (cands.size() == 1) {
    out->candidate = 0;
    return try_match(cands[0], callee.name, call_pos, args, kwargs, out, error);
  }
  std::vector<MatchError> errors(cands.size());
  for (size_t i = 0; i < cands.size(); ++i) {
    if (try_match(cands[i], callee.name, call_pos, args, kwargs, out, &errors[i])) {
      out->candidate = static_cast<int>(i);
      return true;
    }
  }
  // As PythonArgParser::print_error: one plausible candidate by argument count gives its own error
  // (PyTorch's count includes out=: See Note [The out= parameter in overload errors]).
  const size_t nargs = args.size() + kwargs.size();
  std::vector<size_t> plausible;
  for (size_t i = 0; i < cands.size(); ++i) {
    size_t min_args = 0;
    for (size_t j = 0; j < cands[i].schema.arguments().size(); ++j) min_args += is_optional_param(cands[i], j) ? 0 : 1;
    const size_t max_args = cands[i].schema.arguments().size() + (has_python_out(cands[i]) ? 1 : 0);
    if (nargs >= min_args && nargs <= max_args) plausible.push_back(i);
  }
  if (plausible.size() == 1) {
    *error = errors[plausible[0]];
    return false;
  }
  std::vector<std::string> got;
  for (const ArgView& a : args) got.push_back(type_name(a.ty));
  for (const KwView& k : kwargs) got.push_back(str_cat(k.name, "=", type_name(k.ty)));
  std::string message = str_cat(callee.name, "() received an invalid combination of arguments - got (",
                                absl::StrJoin(got, ", "), "), but expected one of:");
  for (const Candidate& c : cands) str_append(&message, "\n * ", candidate_text(c));
  error->message = std::move(message);
  error->pos = errors[0].pos;
  for (const MatchError& e : errors) {
    if (e.pos.line != error->pos.line || e.pos.col != error->pos.col) error->pos = call_pos;
  }
  return false;
}

Stack build_stack(const Callee& callee, const Binding& b, const std::vector<Obj>& args,
                  const std::vector<Obj>& kwargs, const std::vector<ArgView>& arg_views,
                  const std::vector<KwView>& kw_views, const ProgramOrigin& origin) {
  const Candidate& c = callee.candidates[static_cast<size_t>(b.candidate)];
  const auto& params = c.schema.arguments();
  Stack stack(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const Binding::Slot& s = b.slots[i];
    switch (s.source) {
      case Binding::Source::kAbsent:
        if (params[i].default_value) stack[i] = *params[i].default_value;
        break;
      case Binding::Source::kPositional:
        stack[i] = convert(params[i].type, args[s.index], arg_views[s.index].pos, origin);
        break;
      case Binding::Source::kKeyword:
        stack[i] = convert(params[i].type, kwargs[s.index], kw_views[s.index].pos, origin);
        break;
      case Binding::Source::kVarargs: {
        std::vector<int64_t> v;
        for (const Obj& a : args) v.push_back(a.value.to_int());
        stack[i] = Value(std::move(v));
        break;
      }
    }
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (!stack[i].is_none()) continue;
    switch (fill_of(c, i)) {
      case Fill::kNone: break;
      case Fill::kSelfDType: stack[i] = Value(stack[0].to_tensor().dtype()); break;
      case Fill::kSelfDevice: stack[i] = Value(stack[0].to_tensor().device()); break;
      case Fill::kCpu: stack[i] = Value(kCPU); break;
      case Fill::kFalse: stack[i] = Value(false); break;
      case Fill::kStrided: stack[i] = Value(int64_t{0}); break;
    }
  }
  return stack;
}

Ty return_type(const FunctionSchema& schema) {
  auto one = [](const Argument& r) {
    Ty t;
    if (r.type.is_list) return t;  // length unknown
    switch (r.type.kind) {
      case TypeKind::kTensor: t.kind = r.type.is_optional ? Ty::Kind::kUnknown : Ty::Kind::kTensor; break;
      case TypeKind::kScalar: t.kind = Ty::Kind::kNumber; break;
      case TypeKind::kInt: t.kind = Ty::Kind::kInt; break;
      case TypeKind::kFloat: t.kind = Ty::Kind::kFloat; break;
      case TypeKind::kBool: t.kind = Ty::Kind::kBool; break;
      default: break;
    }
    return t;
  };
  const auto& rets = schema.returns();
  if (rets.empty()) return Ty{Ty::Kind::kNone, {}};
  if (rets.size() == 1) return one(rets[0]);
  Ty t{Ty::Kind::kTuple, {}};
  for (const Argument& r : rets) t.items.push_back(one(r));
  return t;
}

Obj obj_from_value(const Value& v) {
  Obj o;
  o.value = v;
  using K = Obj::Kind;
  if (v.is_none()) o.kind = K::kNone;
  else if (v.is_tensor()) o.kind = K::kTensor;
  else if (v.is_int()) o.kind = K::kInt;
  else if (v.is_double()) o.kind = K::kFloat;
  else if (v.is_bool()) o.kind = K::kBool;
  else if (v.is_string()) o.kind = K::kStr;
  else if (v.is_dtype()) o.kind = K::kDType;
  else if (v.is_device()) o.kind = K::kDevice;
  else {
    o.kind = K::kList;
    o.value = Value();
    if (v.is_int_list()) for (int64_t i : v.to_int_list()) o.items.push_back(obj_from_value(Value(i)));
    if (v.is_double_list()) for (double d : v.to_double_list()) o.items.push_back(obj_from_value(Value(d)));
    if (v.is_tensor_list()) for (const Tensor& t : v.to_tensor_list()) o.items.push_back(obj_from_value(Value(t)));
  }
  return o;
}

Obj results_obj(const Stack& results) {
  if (results.empty()) return Obj{};
  if (results.size() == 1) return obj_from_value(results[0]);
  Obj t;
  t.kind = Obj::Kind::kTuple;
  for (const Value& v : results) t.items.push_back(obj_from_value(v));
  return t;
}

Value value_from_obj(const Obj& o) {
  using K = Obj::Kind;
  if (o.kind != K::kList && o.kind != K::kTuple) return o.value;
  bool ints = true, numbers = true, tensors = true;
  for (const Obj& e : o.items) {
    ints = ints && e.kind == K::kInt;
    numbers = numbers && (e.kind == K::kInt || e.kind == K::kFloat);
    tensors = tensors && e.kind == K::kTensor;
  }
  if (ints) {  // also the empty list
    std::vector<int64_t> v;
    for (const Obj& e : o.items) v.push_back(e.value.to_int());
    return Value(std::move(v));
  }
  if (tensors) {
    std::vector<Tensor> v;
    for (const Obj& e : o.items) v.push_back(e.value.to_tensor());
    return Value(std::move(v));
  }
  OPSPEC_CHECK(numbers, "a returned list must hold only ints, only numbers or only tensors");
  std::vector<double> v;
  for (const Obj& e : o.items) v.push_back(e.value.to_double());
  return Value(std::move(v));
}

Ty type_of(const Obj& o) {
  Ty t;
  using K = Obj::Kind;
  switch (o.kind) {
    case K::kNone: t.kind = Ty::Kind::kNone; break;
    case K::kTensor: t.kind = Ty::Kind::kTensor; break;
    case K::kInt: t.kind = Ty::Kind::kInt; break;
    case K::kFloat: t.kind = Ty::Kind::kFloat; break;
    case K::kBool: t.kind = Ty::Kind::kBool; break;
    case K::kStr: t.kind = Ty::Kind::kStr; break;
    case K::kDType: t.kind = Ty::Kind::kDType; break;
    case K::kDevice: t.kind = Ty::Kind::kDevice; break;
    case K::kLayout: t.kind = Ty::Kind::kLayout; break;
    case K::kMemoryFormat: t.kind = Ty::Kind::kMemoryFormat; break;
    case K::kList:
    case K::kTuple:
      t.kind = o.kind == K::kList ? Ty::Kind::kList : Ty::Kind::kTuple;
      for (const Obj& e : o.items) t.items.push_back(type_of(e));
      break;
  }
  return t;
}

std::string type_name(const Ty& t) {
  switch (t.kind) {
    case Ty::Kind::kUnknown: return "object";
    case Ty::Kind::kNone: return "NoneType";
    case Ty::Kind::kTensor: return "Tensor";
    case Ty::Kind::kInt: return "int";
    case Ty::Kind::kFloat: return "float";
    case Ty::Kind::kBool: return "bool";
    case Ty::Kind::kNumber: return "Number";
    case Ty::Kind::kStr: return "str";
    case Ty::Kind::kDType: return "torch.dtype";
    case Ty::Kind::kDevice: return "torch.device";
    case Ty::Kind::kLayout: return "torch.layout";
    case Ty::Kind::kMemoryFormat: return "torch.memory_format";
    case Ty::Kind::kList: return "list";
    case Ty::Kind::kTuple: return "tuple";
  }
  return "object";
}

}  // namespace opspec::internal::prog
