// resolve.h: internal: what a call's name means (builtin, fixture,
// operator overloads), which candidate its arguments bind to (PyTorch's
// Python argument parser rules), and the boxed arguments an operator call
// gets (runtime/ops/ops.cc's conventions). See Note [Overload resolution]
// and Note [ops.cc conventions].
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/program/ast.h"

namespace opspec::internal::prog {

// Note [Overload resolution]
// A bare name means every overload of aten::<name> that PyTorch exposes to
// Python: the C++-only Scalar overloads (add.Scalar, sub.Scalar, mul.Scalar,
// div.Scalar and their in-place forms) are left out when a .Tensor overload
// of the same name exists, as PyTorch's binding generator skips them. With no
// aten op of that name, a user op of that name is used if exactly one
// namespace defines one (otherwise the name is ambiguous and must be
// qualified). `ns::name` means every overload of that op; `ns::name.overload`
// (or `name.overload` for aten) exactly that overload, hidden or not.
// Overloads are tried in PyTorch's order (tools/autograd/gen_python_functions
// sort_overloads: by signature text, then Tensor before Scalar, int before
// int[], other lists before Tensor[]), and the first whose parameters accept
// the arguments wins (torch/csrc/utils/python_arg_parser FunctionSignature::
// parse): positional arguments up to the `*`, then keywords by name (`input`
// also names a `self` parameter), None only where the type is optional or
// the default is None, an int for int[N] (repeated N times), a number for a
// Tensor parameter only in ops PyTorch allows it (add, sub, mul, div and
// their in-place forms, copy_, to, _to_copy; plus where, whose Scalar
// overloads PyTorch implements by wrapping the number into where.self), an
// int for float, and all-int positional arguments as the int[] when that is
// the only positional parameter (zeros(2, 3)). Unlike PyTorch, a 0-dim
// tensor is not accepted for a number parameter, nor an int for a device.
// Errors read as PyTorch's: one candidate (or one plausible by argument
// count) gives its specific error, several give "f() received an invalid
// combination of arguments - got (...), but expected one of:" with the
// candidate schemas.

// Note [ops.cc conventions]
// A program's call records exactly what the public C++ function records:
// numbers for Tensor parameters become wrapped-number tensors
// (make_wrapped_number), as ops::add(x, 1.0) does; factories without a
// tensor argument get device=cpu and pin_memory=False when not given (ops.cc
// factory()); *_like factories fill dtype, layout (strided) and device from
// self and pin_memory=False (ops.cc like()); to.device's dtype defaults to
// self's (ops::to(x, device)). The explicit per-op rules sit in one table in
// resolve.cc (kArgRules).

// lookup_callee: resolves a call's name (see Note [Overload resolution]);
// false with a message ("unknown op 'foo'; did you mean 'for'?") otherwise.
bool lookup_callee(std::string_view name, Callee* out, std::string* error);

// ArgView / KwView: a call argument as matching sees it: its type (static,
// possibly unknown, or the runtime value's) and where it is written.
struct ArgView {
  Ty ty;
  Pos pos;
};
struct KwView {
  std::string name;
  Pos name_pos;
  Ty ty;
  Pos pos;
};

// Binding: how a call's arguments fill one candidate's parameters.
struct Binding {
  enum class Source : uint8_t { kAbsent, kPositional, kKeyword, kVarargs };
  struct Slot {
    Source source = Source::kAbsent;
    int index = -1;  // positional or keyword index
  };
  int candidate = -1;
  std::vector<Slot> slots;  // one per schema argument
};

// MatchError: why no candidate accepts the arguments, and where.
struct MatchError {
  Pos pos;
  std::string message;
};

// resolve_call: the first candidate the arguments bind to; unknown types
// bind to anything (so a static check only rejects calls that cannot work).
bool resolve_call(const Callee& callee, Pos call_pos, const std::vector<ArgView>& args,
                  const std::vector<KwView>& kwargs, Binding* out, MatchError* error);

// build_stack: the complete boxed arguments for the bound candidate:
// values converted to the parameter types, defaults, then the ops.cc
// conventions. Conversion errors (a bad device string) throw ProgramError.
Stack build_stack(const Callee& callee, const Binding& b, const std::vector<Obj>& args,
                  const std::vector<Obj>& kwargs, const std::vector<ArgView>& arg_views,
                  const std::vector<KwView>& kw_views, const ProgramOrigin& origin);

// return_type: the static type of a call of candidate c.
Ty return_type(const FunctionSchema& schema);

// obj_from_value: a Value as a program value (lists become kList).
Obj obj_from_value(const Value& v);
// results_obj: an op's results: None, the single value, or a tuple.
Obj results_obj(const Stack& results);
// value_from_obj: a program value as a Value (for `return`); lists must be
// all ints, all numbers or all tensors. Throws opspec::Error otherwise.
Value value_from_obj(const Obj& o);

// unpack_message: "too many values to unpack (expected 2, got 3)" (check.cc).
std::string unpack_message(size_t expected, size_t got);
// neg_message: "bad operand type for unary -: 'Tensor' (use neg(x) for tensors)".
std::string neg_message(const std::string& type);

// ---- Builtins (builtins.cc) ----
// find_builtin: graph_break, item, tensor, allclose, equal.
bool find_builtin(std::string_view name, BuiltinId* id);
// builtin_schema: the builtin's signature, matched like an operator's.
const FunctionSchema& builtin_schema(BuiltinId id);
// builtin_names: every builtin's name (for suggestions).
std::vector<std::string_view> builtin_names();
// call_builtin: runs the builtin on bound arguments; tensor() takes the shape
// inferred from nested data when no shape is given.
Obj call_builtin(BuiltinId id, const Stack& args, const std::optional<SizeVec>& inferred_shape);
// flatten_tensor_data: tensor()'s data as a flat list (nested lists and a
// single number are accepted); sets shape. False + message if ragged.
bool flatten_tensor_data(const Obj& data, Obj* flat, SizeVec* shape, std::string* error);
// flatten_tensor_data_type: the static counterpart.
Ty flatten_tensor_data_type(const Ty& data);

}  // namespace opspec::internal::prog
