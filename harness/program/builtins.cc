// builtins.cc: the functions a program calls that are not operators:
// graph_break(), item(t), tensor(data, shape, dtype), allclose, equal,
// backward(t, gradient) (t.backward()), grad(x) (x.grad) and retain_grad(t)
// (t.retain_grad()). Each has a
// schema so its arguments bind and fail like an operator's.
#include <source_location>

#include "harness/program/resolve.h"
#include "runtime/compile/controls.h"
#include "runtime/ops/ops.h"

namespace opspec::internal::prog {
namespace {

struct BuiltinDef {
  BuiltinId id;
  std::string_view name;
  std::string_view schema;
};

constexpr BuiltinDef kBuiltins[] = {
    {BuiltinId::kGraphBreak, "graph_break", "graph_break() -> ()"},
    {BuiltinId::kItem, "item", "item(Tensor self) -> Scalar"},
    {BuiltinId::kTensor, "tensor", "tensor(float[] data, int[]? shape=None, *, ScalarType? dtype=None) -> Tensor"},
    {BuiltinId::kAllclose, "allclose",
     "allclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08) -> bool"},
    {BuiltinId::kEqual, "equal", "equal(Tensor self, Tensor other) -> bool"},
    {BuiltinId::kBackward, "backward", "backward(Tensor self, Tensor? gradient=None, bool retain_graph=False) -> ()"},
    {BuiltinId::kGrad, "grad", "grad(Tensor self) -> Tensor"},
    {BuiltinId::kRetainGrad, "retain_grad", "retain_grad(Tensor self) -> ()"},
};

Obj number(const Scalar& s) {
  if (s.is_floating_point()) return obj_from_value(Value(s.to_double()));
  if (s.is_bool()) return obj_from_value(Value(s.to_bool()));
  return obj_from_value(Value(s.to_int()));
}

bool flatten(const Obj& o, int depth, std::vector<Obj>* leaves, SizeVec* shape, std::string* error) {
  if (o.kind != Obj::Kind::kList && o.kind != Obj::Kind::kTuple) {
    if (static_cast<size_t>(depth) != shape->size()) {
      *error = "tensor(): data is ragged (a number where a list was expected)";
      return false;
    }
    leaves->push_back(o);
    return true;
  }
  const auto n = static_cast<int64_t>(o.items.size());
  if (static_cast<size_t>(depth) == shape->size()) {
    if (!leaves->empty()) {
      *error = "tensor(): data is ragged (a list where a number was expected)";
      return false;
    }
    shape->push_back(n);
  } else if ((*shape)[depth] != n) {
    *error = str_cat("tensor(): data is ragged: a list of ", n, " where ", (*shape)[depth], " were expected");
    return false;
  }
  for (const Obj& e : o.items) {
    if (!flatten(e, depth + 1, leaves, shape, error)) return false;
  }
  return true;
}

}  // namespace

bool find_builtin(std::string_view name, BuiltinId* id) {
  for (const BuiltinDef& b : kBuiltins) {
    if (b.name == name) {
      *id = b.id;
      return true;
    }
  }
  return false;
}

const FunctionSchema& builtin_schema(BuiltinId id) {
  static const auto* schemas = [] {
    auto* v = new std::vector<FunctionSchema>();
    for (const BuiltinDef& b : kBuiltins) v->push_back(FunctionSchema::parse(b.schema, "builtin"));
    return v;
  }();
  return (*schemas)[static_cast<size_t>(id)];
}

std::vector<std::string_view> builtin_names() {
  std::vector<std::string_view> out;
  for (const BuiltinDef& b : kBuiltins) out.push_back(b.name);
  return out;
}

Obj call_builtin(BuiltinId id, const Stack& args, const std::optional<SizeVec>& inferred_shape) {
  switch (id) {
    case BuiltinId::kGraphBreak:
      graph_break(std::source_location::current());
      return Obj{};
    case BuiltinId::kItem:
      return number(ops::item(args[0].to_tensor(), std::source_location{}));
    case BuiltinId::kTensor: {
      SizeVec shape;
      if (!args[1].is_none()) {
        const auto& s = args[1].to_int_list();
        shape.assign(s.begin(), s.end());
      } else if (inferred_shape) {
        shape = *inferred_shape;
      } else {
        shape.push_back(static_cast<int64_t>(args[0].to_double_list().size()));
      }
      const DType dtype = args[2].is_none() ? DType::kFloat32 : args[2].to_dtype();
      // Python's torch.tensor: the data is made outside the dispatcher, then lift_fresh is dispatched.
      return obj_from_value(
          Value(ops::lift_fresh(ops::tensor(args[0].to_double_list(), shape, dtype, std::source_location{}))));
    }
    case BuiltinId::kAllclose:
      return obj_from_value(
          Value(ops::allclose(args[0].to_tensor(), args[1].to_tensor(), args[2].to_double(), args[3].to_double())));
    case BuiltinId::kEqual:
      return obj_from_value(Value(ops::equal(args[0].to_tensor(), args[1].to_tensor())));
    case BuiltinId::kBackward: {
      // Inside a compiled program this is Dynamo's graph break on Tensor.backward().
      const Tensor gradient = args[1].is_none() ? Tensor() : args[1].to_tensor();
      args[0].to_tensor().backward(gradient, args[2].to_bool());
      return Obj{};
    }
    case BuiltinId::kGrad: {
      const Tensor& t = args[0].to_tensor();
      Tensor g = t.grad();
      OPSPEC_CHECK(g.defined(), "grad(): the tensor has no gradient (its .grad is None): ",
                   !t.requires_grad()                  ? "it does not require grad (give its input requires_grad: true)"
                   : !t.is_leaf() && !t.retains_grad() ? "it is not a leaf (only inputs get .grad; call retain_grad(t) "
                                                         "before backward() to keep a result's)"
                                                       : "no backward() reached it");
      return obj_from_value(Value(std::move(g)));
    }
    case BuiltinId::kRetainGrad:
      args[0].to_tensor().retain_grad();  // PyTorch's error for a tensor that does not require grad
      return Obj{};
  }
  return Obj{};
}

bool flatten_tensor_data(const Obj& data, Obj* flat, SizeVec* shape, std::string* error) {
  flat->kind = Obj::Kind::kList;
  flat->value = Value();
  flat->items.clear();
  shape->clear();
  return flatten(data, 0, &flat->items, shape, error);
}

Ty flatten_tensor_data_type(const Ty& data) {
  if (data.kind != Ty::Kind::kList && data.kind != Ty::Kind::kTuple) {
    if (data.kind == Ty::Kind::kUnknown) return data;
    return Ty{Ty::Kind::kList, {data}};  // a single number: a 0-dim tensor
  }
  Ty out{Ty::Kind::kList, {}};
  for (const Ty& e : data.items) {
    const Ty f = flatten_tensor_data_type(e);
    if (f.kind == Ty::Kind::kUnknown) return f;
    if (e.kind == Ty::Kind::kList || e.kind == Ty::Kind::kTuple) {
      out.items.insert(out.items.end(), f.items.begin(), f.items.end());
    } else {
      out.items.push_back(e);
    }
  }
  return out;
}

}  // namespace opspec::internal::prog
