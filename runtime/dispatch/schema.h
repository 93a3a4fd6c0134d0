// schema.h: FunctionSchema, an op's ATen-style signature, parsed from text such
// as "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "runtime/dispatch/value.h"

namespace opspec {

// TypeKind: the base type of an argument or return.
enum class TypeKind : uint8_t {
  kTensor,
  kScalar,
  kInt,
  kFloat,
  kBool,
  kString,
  kScalarType,
  kDevice,
  kLayout,        // accepted for compatibility; only strided exists
  kMemoryFormat,  // accepted for compatibility; carried as an int
  kGenerator,     // accepted for compatibility; always None
};

// ArgType: a base type, optionally a list ("int[2]", "Tensor[]") and/or optional ("?").
struct ArgType {
  TypeKind kind = TypeKind::kTensor;
  bool is_list = false;
  int list_size = 0;        // N of "int[N]"; 0 when unsized
  bool is_optional = false;  // "Tensor?" or "int[]?"
  bool element_optional = false;  // "Tensor?[]"

  // str: the schema spelling, e.g. "int[2]?".
  std::string str() const;
};

// Argument: one parameter or return of a schema.
struct Argument {
  std::string name;
  ArgType type;
  std::optional<Value> default_value;
  bool kwarg_only = false;
  // Alias annotation "Tensor(a)" / "Tensor(a!)": set name and whether written.
  std::string alias_set;
  bool is_write = false;

  // str: "Scalar alpha=1".
  std::string str() const;
};

// FunctionSchema: namespace, name, overload, arguments and returns.
namespace internal { class SchemaParser; }

class FunctionSchema {
 public:
  // parse: parses schema text; "ns::" defaults to default_namespace. Throws
  // opspec::Error with the column of the problem on malformed text.
  static FunctionSchema parse(std::string_view text, std::string_view default_namespace = "aten");

  const std::string& ns() const { return ns_; }
  const std::string& name() const { return name_; }
  const std::string& overload() const { return overload_; }
  // qualified_name: "aten::add.Tensor" (no ".overload" for the default overload).
  const std::string& qualified_name() const { return qualified_name_; }
  // base_name: "aten::add", the name without the overload.
  std::string base_name() const { return ns_ + "::" + name_; }
  const std::vector<Argument>& arguments() const { return arguments_; }
  const std::vector<Argument>& returns() const { return returns_; }
  // num_positional: arguments before the "*".
  int num_positional() const { return num_positional_; }
  // is_mutable: some argument is written (an in-place or out= op).
  bool is_mutable() const { return mutable_; }
  // argument_index: position of a named argument, or -1.
  int argument_index(std::string_view name) const;

  // format_arguments: the arguments as PyTorch prints a call: positional ones
  // in order, then keyword-only ones that differ from their default as
  // name=value ("[8, 8], device=cpu, pin_memory=False").
  std::string format_arguments(const Stack& args) const;
  // format_arguments(args, render): the same, except that an argument for which
  // render(index) returns a string is shown as that string and never counts as
  // a default (the graph printer renders node references this way).
  std::string format_arguments(const Stack& args,
                               absl::FunctionRef<std::optional<std::string>(size_t index)> render) const;
  // format_value: one argument's value, spelling layouts and memory formats
  // as torch does (torch.strided, torch.contiguous_format).
  static std::string format_value(const ArgType& type, const Value& v);

  // str: the schema text in canonical form.
  std::string str() const;

  // bind: builds a full Stack from positional and keyword values, filling
  // defaults and checking arity and types; errors name the op and argument.
  Stack bind(std::vector<Value> positional, std::vector<std::pair<std::string, Value>> kwargs = {}) const;
  // check_stack: throws if stack does not match the arguments (count and types).
  void check_stack(const Stack& stack) const;
  // check_value: whether v is acceptable for an argument of type t.
  static bool value_matches(const ArgType& t, const Value& v);

 private:
  friend class internal::SchemaParser;
  std::string ns_, name_, overload_, qualified_name_;
  std::vector<Argument> arguments_;
  std::vector<Argument> returns_;
  bool mutable_ = false;  // is_mutable(), found once by the parser (the Autograd kernel asks on every call)
  int num_positional_ = 0;
};

}  // namespace opspec
