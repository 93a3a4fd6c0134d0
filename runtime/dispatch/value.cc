#include "runtime/dispatch/value.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/core/error.h"

namespace opspec {

std::string_view Value::type_name() const {
  static constexpr std::string_view kNames[] = {"None",    "Tensor",   "Tensor",     "int",    "float", "bool", "int[]",
                                                "float[]", "Tensor[]", "ScalarType", "Device", "str",   "bool[]"};
  return kNames[v_.index()];
}

void Value::type_error(std::string_view wanted) const {
  OPSPEC_FAIL("expected a value of type ", wanted, " but got ", type_name(), " (", repr(), ")");
}

Scalar Value::tensor_to_scalar() const {
  if (const Tensor* t = is_tensor() ? &to_tensor() : nullptr;
      t && t->defined() && t->numel() == 1 && t->impl()->storage()->device().is_cpu()) {
    return internal::read_scalar(*t);
  }
  type_error("Scalar");
}
const std::vector<int64_t>& Value::to_int_list() const {
  if (auto* l = std::get_if<std::vector<int64_t>>(&v_)) return *l;
  type_error("int[]");
}
const std::vector<double>& Value::to_double_list() const {
  if (auto* l = std::get_if<std::vector<double>>(&v_)) return *l;
  type_error("float[]");
}
const std::vector<bool>& Value::to_bool_list() const {
  if (auto* l = std::get_if<std::vector<bool>>(&v_)) return *l;
  type_error("bool[]");
}
DType Value::to_dtype() const {
  if (auto* d = std::get_if<DType>(&v_)) return *d;
  type_error("ScalarType");
}
Device Value::to_device() const {
  if (auto* d = std::get_if<Device>(&v_)) return *d;
  type_error("Device");
}
const std::string& Value::to_string() const {
  if (auto* s = std::get_if<std::string>(&v_)) return *s;
  type_error("str");
}

std::string Value::repr() const {
  struct Visitor {
    std::string operator()(std::monostate) const { return "None"; }
    std::string operator()(const Tensor& t) const {
      if (t.defined() && t.is_wrapped_number()) return Value(t).to_scalar().str();
      return t.meta_str();
    }
    std::string operator()(const internal::BorrowedTensor& b) const { return (*this)(b.get()); }
    std::string operator()(int64_t i) const { return str_cat(i); }
    std::string operator()(double d) const { return format_double(d); }
    std::string operator()(bool b) const { return b ? "True" : "False"; }
    std::string operator()(const std::vector<int64_t>& l) const {
      return str_cat("[", absl::StrJoin(l, ", "), "]");
    }
    std::string operator()(const std::vector<double>& l) const {
      return str_cat("[", absl::StrJoin(l, ", ", [](std::string* o, double d) {
                            o->append(format_double(d));
                          }),
                          "]");
    }
    std::string operator()(const std::vector<Tensor>& l) const {
      return str_cat("[", absl::StrJoin(l, ", ", [](std::string* o, const Tensor& t) {
                            o->append(t.defined() ? t.meta_str() : "None");  // None of a Tensor?[]
                          }),
                          "]");
    }
    std::string operator()(const std::vector<bool>& l) const {
      return str_cat("[", absl::StrJoin(l, ", ", [](std::string* o, bool b) { o->append(b ? "True" : "False"); }),
                     "]");
    }
    std::string operator()(DType d) const { return std::string(dtype_torch_name(d)); }
    std::string operator()(Device d) const { return d.str(); }
    std::string operator()(const std::string& s) const { return str_cat("'", s, "'"); }
  };
  return std::visit(Visitor{}, v_);
}

bool operator==(const Value& a, const Value& b) {
  if (a.is_tensor() || b.is_tensor()) return a.is_tensor() && b.is_tensor() && a.to_tensor().is_same(b.to_tensor());
  if (a.v_.index() != b.v_.index()) return false;
  if (a.is_tensor_list()) {
    const auto& x = a.to_tensor_list();
    const auto& y = b.to_tensor_list();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!x[i].is_same(y[i])) return false;
    }
    return true;
  }
  // Remaining alternatives all have operator==.
  return std::visit(
      [&](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Tensor> || std::is_same_v<T, internal::BorrowedTensor> ||
                      std::is_same_v<T, std::vector<Tensor>>) {
          return false;
        } else {
          return x == std::get<T>(b.v_);
        }
      },
      a.v_);
}

}  // namespace opspec
