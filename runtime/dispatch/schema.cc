#include "runtime/dispatch/schema.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/core/error.h"
#include "runtime/core/memory_format.h"

namespace opspec {
namespace internal {

// kScalarTypeDefaults: the ScalarType names a schema default may use
// (randint's "ScalarType? dtype=long"), and how Argument::str prints them back.
constexpr std::pair<std::string_view, DType> kScalarTypeDefaults[] = {
    {"float", DType::kFloat32}, {"double", DType::kFloat64}, {"half", DType::kFloat16},
    {"bfloat16", DType::kBFloat16}, {"long", DType::kInt64}, {"int", DType::kInt32}, {"bool", DType::kBool},
};

// SchemaParser: a hand-written recursive-descent parser over the schema grammar
//   schema  := [ns "::"] name ["." overload] "(" [args] ")" "->" returns
//   args    := arg ("," arg)*  with a bare "*" separating keyword-only args
//   arg     := type [alias] name ["=" default]
//   returns := type | "(" [type [name] ("," type [name])*] ")"
class SchemaParser {
 public:
  SchemaParser(std::string_view text, std::string_view default_ns) : text_(text), default_ns_(default_ns) {}

  FunctionSchema parse();

 private:
  [[noreturn]] void fail(std::string_view what) const {
    OPSPEC_FAIL("invalid schema '", text_, "': ", what, " at column ", pos_ + 1);
  }
  void skip_ws() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool peek(std::string_view s) {
    skip_ws();
    return text_.substr(pos_, s.size()) == s;
  }
  bool accept(std::string_view s) {
    if (!peek(s)) return false;
    pos_ += s.size();
    return true;
  }
  void expect(std::string_view s) {
    if (!accept(s)) fail(str_cat("expected '", s, "'"));
  }
  std::string identifier() {
    skip_ws();
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    if (start == pos_) fail("expected an identifier");
    return std::string(text_.substr(start, pos_ - start));
  }

  ArgType type();
  void alias(Argument& arg);
  Value default_value(const ArgType& t);
  Value scalar_literal(const ArgType& t);

  std::string_view text_;
  std::string_view default_ns_;
  size_t pos_ = 0;

};

ArgType SchemaParser::type() {
  ArgType t;
  const std::string base = identifier();
  static constexpr std::pair<std::string_view, TypeKind> kBaseTypes[] = {
      {"Tensor", TypeKind::kTensor},       {"Scalar", TypeKind::kScalar},
      {"int", TypeKind::kInt},             {"SymInt", TypeKind::kInt},
      {"float", TypeKind::kFloat},         {"bool", TypeKind::kBool},
      {"str", TypeKind::kString},          {"ScalarType", TypeKind::kScalarType},
      {"Device", TypeKind::kDevice},       {"Layout", TypeKind::kLayout},
      {"MemoryFormat", TypeKind::kMemoryFormat}, {"Generator", TypeKind::kGenerator},
  };
  bool found = false;
  for (const auto& [name, kind] : kBaseTypes) {
    if (base == name) {
      t.kind = kind;
      found = true;
    }
  }
  if (!found) {
    pos_ -= base.size();
    fail(str_cat("unknown type '", base, "'"));
  }
  return t;
}

void SchemaParser::alias(Argument& arg) {
  if (!accept("(")) return;
  skip_ws();
  const size_t start = pos_;
  while (pos_ < text_.size() && text_[pos_] != ')' && text_[pos_] != '!') ++pos_;
  arg.alias_set = std::string(text_.substr(start, pos_ - start));
  if (accept("!")) arg.is_write = true;
  expect(")");
}

Value SchemaParser::scalar_literal(const ArgType& t) {
  skip_ws();
  if (accept("True")) return Value(true);
  if (accept("False")) return Value(false);
  if (accept("inf")) return Value(std::numeric_limits<double>::infinity());
  if (accept("-inf")) return Value(-std::numeric_limits<double>::infinity());
  const size_t start = pos_;
  while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                 text_[pos_] == '.' || text_[pos_] == '-' || text_[pos_] == '+' || text_[pos_] == '_')) {
    ++pos_;
  }
  const std::string lit(text_.substr(start, pos_ - start));
  if (lit.empty()) fail("expected a default value");
  const bool looks_float = lit.find_first_of(".eE") != std::string::npos;
  if (t.kind == TypeKind::kFloat || (t.kind == TypeKind::kScalar && looks_float)) {
    char* end = nullptr;
    const double d = std::strtod(lit.c_str(), &end);
    if (end != lit.c_str() + lit.size()) fail(str_cat("bad number '", lit, "'"));
    return Value(d);
  }
  int64_t i = 0;
  auto [ptr, ec] = std::from_chars(lit.data(), lit.data() + lit.size(), i);
  if (ec != std::errc() || ptr != lit.data() + lit.size()) {
    // Named constants: memory formats and layouts travel as ints (MemoryFormat's values).
    if (lit == "strided") return Value(int64_t{0});
    for (MemoryFormat f : {MemoryFormat::kContiguous, MemoryFormat::kPreserve, MemoryFormat::kChannelsLast,
                           MemoryFormat::kChannelsLast3d}) {
      if ("torch." + lit == memory_format_name(f)) return Value(static_cast<int64_t>(f));
    }
    if (lit == "Mean") return Value(int64_t{1});  // at::Reduction::Mean (None 0, Sum 2)
    // A ScalarType default names a dtype as the schema does ("dtype=long").
    if (t.kind == TypeKind::kScalarType) {
      for (const auto& [name, dtype] : kScalarTypeDefaults) {
        if (lit == name) return Value(dtype);
      }
    }
    fail(str_cat("bad default value '", lit, "'"));
  }
  return Value(i);
}

Value SchemaParser::default_value(const ArgType& t) {
  if (accept("None")) return Value();
  if (t.is_list) {
    std::vector<int64_t> ints;
    std::vector<double> doubles;
    if (accept("[")) {
      while (!accept("]")) {
        Value v = scalar_literal(ArgType{t.kind});
        if (v.is_double()) doubles.push_back(v.to_double());
        else ints.push_back(v.to_int());
        accept(",");
      }
    } else {  // "int[2] stride=1" broadcasts a single value
      Value v = scalar_literal(ArgType{t.kind});
      ints.assign(std::max(t.list_size, 1), v.to_int());
    }
    if (t.kind == TypeKind::kFloat) return Value(doubles);
    return Value(ints);
  }
  if (t.kind == TypeKind::kString) {
    skip_ws();
    const char quote = pos_ < text_.size() ? text_[pos_] : '\0';
    if (quote != '"' && quote != '\'') fail("expected a quoted string");
    const size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string s(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return Value(std::move(s));
  }
  return scalar_literal(t);
}


FunctionSchema SchemaParser::parse() {
  FunctionSchema schema;
  std::string first = identifier();
  // A dotted namespace names a Python module, as "torch._C::_set_grad_enabled"
  // does: dots before "::" belong to the namespace, a dot after the name
  // starts the overload.
  while (peek(".")) {
    const size_t saved = pos_;
    ++pos_;
    std::string part = identifier();
    if (!peek(".") && !peek("::")) {
      pos_ = saved;
      break;
    }
    str_append(&first, ".", part);
  }
  if (accept("::")) {
    schema.ns_ = first;
    schema.name_ = identifier();
  } else {
    schema.ns_ = std::string(default_ns_);
    schema.name_ = first;
  }
  if (accept(".")) schema.overload_ = identifier();
  expect("(");
  bool kwarg_only = false;
  if (!accept(")")) {
    while (true) {
      if (accept("*")) {
        kwarg_only = true;
      } else {
        Argument arg;
        arg.type = type();
        alias(arg);
        if (accept("[")) {
          arg.type.is_list = true;
          skip_ws();
          while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
            arg.type.list_size = arg.type.list_size * 10 + (text_[pos_++] - '0');
          }
          expect("]");
        }
        if (accept("?")) {
          if (!arg.type.is_list && arg.type.kind == TypeKind::kTensor && peek("[")) {
            arg.type.element_optional = true;
          } else {
            arg.type.is_optional = true;
          }
        }
        if (arg.type.element_optional) {  // Tensor?[]: a list of optional tensors
          expect("[");
          expect("]");
          arg.type.is_list = true;
        }
        alias(arg);
        arg.name = identifier();
        arg.kwarg_only = kwarg_only;
        if (accept("=")) arg.default_value = default_value(arg.type);
        if (!kwarg_only) ++schema.num_positional_;
        schema.arguments_.push_back(std::move(arg));
      }
      if (accept(")")) break;
      expect(",");
    }
  }
  expect("->");
  auto parse_return = [&] {
    Argument ret;
    ret.type = type();
    alias(ret);
    if (accept("[")) {
      ret.type.is_list = true;
      expect("]");
    }
    if (accept("?")) ret.type.is_optional = true;
    skip_ws();
    if (pos_ < text_.size() && std::isalpha(static_cast<unsigned char>(text_[pos_]))) ret.name = identifier();
    schema.returns_.push_back(std::move(ret));
  };
  if (accept("(")) {
    if (!accept(")")) {
      while (true) {
        parse_return();
        if (accept(")")) break;
        expect(",");
      }
    }
  } else {
    parse_return();
  }
  skip_ws();
  if (pos_ != text_.size()) fail("unexpected trailing text");
  schema.qualified_name_ = schema.ns_ + "::" + schema.name_;
  if (!schema.overload_.empty()) schema.qualified_name_ += "." + schema.overload_;
  for (const Argument& a : schema.arguments_) schema.mutable_ = schema.mutable_ || a.is_write;
  return schema;
}

}  // namespace internal

FunctionSchema FunctionSchema::parse(std::string_view text, std::string_view default_namespace) {
  return internal::SchemaParser(text, default_namespace).parse();
}

std::string ArgType::str() const {
  static constexpr std::string_view kNames[] = {"Tensor", "Scalar", "int", "float", "bool", "str",
                                                "ScalarType", "Device", "Layout", "MemoryFormat",
                                                "Generator"};
  std::string s(kNames[static_cast<int>(kind)]);
  if (element_optional) s += "?";
  if (is_list) s += list_size ? str_cat("[", list_size, "]") : "[]";
  if (is_optional) s += "?";
  return s;
}

std::string Argument::str() const {
  std::string s = type.str();
  if (!alias_set.empty()) {
    // Alias annotations sit on the base type: Tensor(a!) self.
    const size_t at = s.find_first_of("[?");
    s.insert(at == std::string::npos ? s.size() : at, str_cat("(", alias_set, is_write ? "!" : "", ")"));
  }
  if (!name.empty()) str_append(&s, " ", name);
  if (default_value) {
    std::string d = default_value->repr();
    if (default_value->is_string()) d = str_cat("\"", default_value->to_string(), "\"");
    if (type.kind == TypeKind::kMemoryFormat && default_value->is_int()) {
      // As the schema spells it: memory_format=contiguous_format.
      if (const std::optional<MemoryFormat> f = memory_format_from_int(default_value->to_int())) {
        d = std::string(memory_format_name(*f).substr(std::string_view("torch.").size()));
      }
    }
    if (default_value->is_dtype()) {
      for (const auto& [name, dtype] : internal::kScalarTypeDefaults) {
        if (dtype == default_value->to_dtype()) d = std::string(name);
      }
    }
    str_append(&s, "=", d);
  }
  return s;
}

std::string FunctionSchema::format_value(const ArgType& type, const Value& v) {
  if (v.is_int() && !type.is_list) {
    if (type.kind == TypeKind::kLayout) return v.to_int() == 0 ? "torch.strided" : v.repr();
    if (type.kind == TypeKind::kMemoryFormat) {
      if (const std::optional<MemoryFormat> f = memory_format_from_int(v.to_int())) {
        return std::string(memory_format_name(*f));
      }
    }
  }
  return v.repr();
}

std::string FunctionSchema::format_arguments(const Stack& args) const {
  return format_arguments(args, [](size_t) -> std::optional<std::string> { return std::nullopt; });
}

std::string FunctionSchema::format_arguments(
    const Stack& args, absl::FunctionRef<std::optional<std::string>(size_t index)> render) const {
  // As the dispatcher hands a call to Python: positional arguments up to the
  // last one that differs from its default, then non-default keyword ones.
  const size_t n = std::min(args.size(), arguments_.size());
  std::vector<std::optional<std::string>> rendered(n);
  for (size_t i = 0; i < n; ++i) rendered[i] = render(i);
  auto is_default = [&](size_t i) {
    if (rendered[i]) return false;
    const Argument& a = arguments_[i];
    return a.default_value ? args[i] == *a.default_value : (a.type.is_optional && args[i].is_none());
  };
  size_t last_positional = 0;
  for (size_t i = 0; i < n && !arguments_[i].kwarg_only; ++i) {
    if (!is_default(i)) last_positional = i + 1;
  }
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    const Argument& a = arguments_[i];
    if (a.kwarg_only ? is_default(i) : i >= last_positional) continue;
    if (!out.empty()) out += ", ";
    if (a.kwarg_only) str_append(&out, a.name, "=");
    out += rendered[i] ? *rendered[i] : format_value(a.type, args[i]);
  }
  return out;
}

int FunctionSchema::argument_index(std::string_view name) const {
  for (size_t i = 0; i < arguments_.size(); ++i) {
    if (arguments_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::string FunctionSchema::str() const {
  std::string s = name_;
  if (!overload_.empty()) str_append(&s, ".", overload_);
  s += "(";
  for (size_t i = 0; i < arguments_.size(); ++i) {
    if (i > 0) s += ", ";
    if (static_cast<int>(i) == num_positional_) s += "*, ";
    s += arguments_[i].str();
  }
  s += ") -> ";
  if (returns_.size() == 1 && returns_[0].name.empty()) {
    s += returns_[0].str();
  } else {
    s += "(";
    for (size_t i = 0; i < returns_.size(); ++i) str_append(&s, i ? ", " : "", returns_[i].str());
    s += ")";
  }
  return s;
}

bool FunctionSchema::value_matches(const ArgType& t, const Value& v) {
  if (v.is_none()) return t.is_optional || (t.kind == TypeKind::kGenerator);
  if (t.is_list) {
    switch (t.kind) {
      case TypeKind::kInt: return v.is_int_list() || (t.list_size > 0 && v.is_int());
      case TypeKind::kFloat: return v.is_double_list();
      case TypeKind::kBool: return v.is_bool_list();
      case TypeKind::kTensor: return v.is_tensor_list();
      default: return false;
    }
  }
  switch (t.kind) {
    case TypeKind::kTensor: return v.is_tensor();
    case TypeKind::kScalar: return v.is_scalar() || (v.is_tensor() && v.to_tensor().is_wrapped_number());
    case TypeKind::kInt:
    case TypeKind::kMemoryFormat:
    case TypeKind::kLayout: return v.is_int();
    case TypeKind::kFloat: return v.is_double() || v.is_int();
    case TypeKind::kBool: return v.is_bool();
    case TypeKind::kString: return v.is_string();
    case TypeKind::kScalarType: return v.is_dtype();
    case TypeKind::kDevice: return v.is_device();
    case TypeKind::kGenerator: return false;
  }
  return false;
}

void FunctionSchema::check_stack(const Stack& stack) const {
  OPSPEC_CHECK(stack.size() == arguments_.size(), qualified_name_, "() expected ", arguments_.size(),
               " argument(s) but received ", stack.size(), " argument(s). Declaration: ", str());
  for (size_t i = 0; i < arguments_.size(); ++i) {
    OPSPEC_CHECK(value_matches(arguments_[i].type, stack[i]), qualified_name_, "(): argument '",
                 arguments_[i].name, "' (position ", i + 1, ") must be ", arguments_[i].type.str(), ", not ",
                 stack[i].type_name(), ". Declaration: ", str());
  }
}

Stack FunctionSchema::bind(std::vector<Value> positional, std::vector<std::pair<std::string, Value>> kwargs) const {
  OPSPEC_CHECK(static_cast<int>(positional.size()) <= num_positional_, qualified_name_, "() takes at most ",
               num_positional_, " positional argument(s) but ", positional.size(), " were given. Declaration: ",
               str());
  Stack stack(arguments_.size());
  std::vector<bool> set(arguments_.size(), false);
  for (size_t i = 0; i < positional.size(); ++i) {
    stack[i] = std::move(positional[i]);
    set[i] = true;
  }
  for (auto& [name, value] : kwargs) {
    const int idx = argument_index(name);
    OPSPEC_CHECK(idx >= 0, qualified_name_, "() got an unexpected keyword argument '", name,
                 "'. Declaration: ", str());
    OPSPEC_CHECK(!set[idx], qualified_name_, "() got multiple values for argument '", name, "'");
    stack[idx] = std::move(value);
    set[idx] = true;
  }
  for (size_t i = 0; i < arguments_.size(); ++i) {
    if (set[i]) continue;
    if (arguments_[i].default_value) {
      stack[i] = *arguments_[i].default_value;
    } else if (arguments_[i].type.is_optional) {
      stack[i] = Value();
    } else {
      OPSPEC_FAIL(qualified_name_, "() missing required argument '", arguments_[i].name, "' (position ", i + 1,
                  "). Declaration: ", str());
    }
  }
  // Widen "int[2]" given as a single int, and float given as int.
  for (size_t i = 0; i < arguments_.size(); ++i) {
    const ArgType& t = arguments_[i].type;
    if (t.is_list && t.kind == TypeKind::kInt && stack[i].is_int()) {
      stack[i] = Value(std::vector<int64_t>(std::max(t.list_size, 1), stack[i].to_int()));
    } else if (!t.is_list && t.kind == TypeKind::kFloat && stack[i].is_int()) {
      stack[i] = Value(static_cast<double>(stack[i].to_int()));
    }
  }
  check_stack(stack);
  return stack;
}

}  // namespace opspec
