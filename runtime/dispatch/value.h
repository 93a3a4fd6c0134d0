// value.h: Value, one boxed argument or result, and Stack, the boxed calling
// convention used by modes, fallbacks and tracing (PyTorch's IValue/Stack).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "runtime/core/device.h"
#include "runtime/core/dtype.h"
#include "runtime/core/scalar.h"
#include "runtime/core/tensor.h"

namespace opspec {

// OptionalTensorList: the unboxed type of "Tensor?[]" (PyTorch's
// c10::List<std::optional<Tensor>>): an undefined entry stands for None.
// Boxed, it is a Tensor[] Value holding the undefined entries as they are.
// See Note [Optional tensor lists].
struct OptionalTensorList {
  TensorList tensors;
};

// Note [Optional tensor lists]
// "Tensor?[]" (index.Tensor's indices) travels as a Tensor[] Value whose None
// entries are undefined tensors, so the code that walks tensor lists (fake
// tensors, tracing, autograd, DebugMode) sees one kind of list and only has to
// skip undefined entries; the schema's element_optional says which lists may
// hold them, and Value::repr prints them as None.

// Note [Borrowed arguments]
// A typed call whose kernel is boxed (a mode's fallback above all) boxes its
// arguments into a Stack that lives only for that call, while the caller
// holds every argument. An owned copy of each Tensor there cost a locked
// increment, and a locked decrement when the kernel cleared the stack: four
// per recorded add(a, b), 18 ns of the 51 ns it cost over a plain add on the
// development VM. So box_args borrows them: the Value refers to the caller's
// Tensor without a count of its own. It reads as any tensor Value (is_tensor,
// the const to_tensor); copying or moving it, or asking for a mutable
// Tensor&, makes an owned one (one increment), so no borrowed Value leaves
// the Stack box_args made (it borrows only when the arguments fit inline: a
// move of a heap-allocated Stack takes its buffer, not each Value). The one
// difference a kernel or handler can see: an argument's use_count() is one
// lower, as in the unboxed call, which passes references.

namespace internal {
// BorrowedTensor: a Value's tensor that it does not own (See Note [Borrowed
// arguments]). Its handle is never destroyed, so the count it never took is
// never given back.
class BorrowedTensor {
 public:
  explicit BorrowedTensor(const Tensor& t) : t_(IntrusivePtr<TensorImpl>::borrow(t.impl())) {}
  BorrowedTensor(const BorrowedTensor& o) : BorrowedTensor(o.t_) {}
  BorrowedTensor& operator=(const BorrowedTensor& o) {
    std::construct_at(&t_, IntrusivePtr<TensorImpl>::borrow(o.t_.impl()));  // the old handle holds no count
    return *this;
  }
  ~BorrowedTensor() {}  // NOLINT: t_ is left undestroyed on purpose
  const Tensor& get() const { return t_; }

 private:
  union {
    Tensor t_;
  };
};
}  // namespace internal

// Value: None, a Tensor, int, double, bool, int list, double list, tensor
// list, bool list, dtype, device or string. Scalar-typed arguments are stored as int,
// double or bool so a Scalar round-trips with its kind.
class Value {
 public:
  Value() = default;
  Value(std::nullopt_t) {}                                    // NOLINT
  Value(Tensor t) : v_(std::move(t)) {}                       // NOLINT
  Value(int64_t i) : v_(i) {}                                 // NOLINT
  Value(int i) : v_(int64_t{i}) {}                            // NOLINT
  Value(double d) : v_(d) {}                                  // NOLINT
  Value(bool b) : v_(b) {}                                    // NOLINT
  Value(const Scalar& s) : v_(scalar_storage(s)) {}           // NOLINT
  Value(std::vector<int64_t> l) : v_(std::move(l)) {}         // NOLINT
  Value(IntArrayRef l) : v_(std::vector<int64_t>(l.begin(), l.end())) {}  // NOLINT
  Value(std::vector<double> l) : v_(std::move(l)) {}          // NOLINT
  Value(std::vector<Tensor> l) : v_(std::move(l)) {}          // NOLINT
  Value(TensorList l) : v_(std::vector<Tensor>(l.begin(), l.end())) {}  // NOLINT
  Value(OptionalTensorList l) : Value(l.tensors) {}                      // NOLINT: Tensor?[]
  Value(std::vector<bool> l) : v_(std::move(l)) {}            // NOLINT
  Value(std::array<bool, 3> l) : v_(std::vector<bool>(l.begin(), l.end())) {}  // NOLINT: bool[3]
  Value(DType d) : v_(d) {}                                   // NOLINT
  Value(Device d) : v_(d) {}                                  // NOLINT
  Value(std::string s) : v_(std::move(s)) {}                  // NOLINT
  Value(const char* s) : v_(std::string(s)) {}                // NOLINT
  Value(std::string_view s) : v_(std::string(s)) {}           // NOLINT
  template <class T>
  Value(const std::optional<T>& o) {  // NOLINT
    if (o) *this = Value(*o);
  }
  // Value(kBorrow, t): t, borrowed (See Note [Borrowed arguments]); for box_args.
  struct Borrow {};
  static constexpr Borrow kBorrow{};
  Value(Borrow, const Tensor& t) : v_(std::in_place_type<internal::BorrowedTensor>, t) {}

  // Copies and moves of a borrowed tensor own it (See Note [Borrowed arguments]).
  Value(const Value& o) : v_(o.is_borrowed() ? o.owned_storage() : o.v_) {}
  Value(Value&& o) noexcept : v_(o.is_borrowed() ? o.owned_storage() : std::move(o.v_)) {}
  Value& operator=(const Value& o) {
    if (o.is_borrowed()) {
      v_ = o.owned_storage();
    } else {
      v_ = o.v_;
    }
    return *this;
  }
  Value& operator=(Value&& o) noexcept {
    if (o.is_borrowed()) {
      v_ = o.owned_storage();
    } else {
      v_ = std::move(o.v_);
    }
    return *this;
  }

  bool is_none() const { return v_.index() == 0; }
  bool is_tensor() const { return v_.index() - 1 <= 1; }  // owned or borrowed (indices 1 and 2)
  bool is_int() const { return std::holds_alternative<int64_t>(v_); }
  bool is_double() const { return std::holds_alternative<double>(v_); }
  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_scalar() const { return is_int() || is_double() || is_bool(); }
  bool is_int_list() const { return std::holds_alternative<std::vector<int64_t>>(v_); }
  bool is_double_list() const { return std::holds_alternative<std::vector<double>>(v_); }
  bool is_tensor_list() const { return std::holds_alternative<std::vector<Tensor>>(v_); }
  bool is_bool_list() const { return std::holds_alternative<std::vector<bool>>(v_); }
  bool is_dtype() const { return std::holds_alternative<DType>(v_); }
  bool is_device() const { return std::holds_alternative<Device>(v_); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }

  // Accessors throw opspec::Error naming both types on a mismatch. The hot
  // ones are inline (every boxed call reads its tensors through them).
  const Tensor& to_tensor() const {
    if (const auto* t = std::get_if<Tensor>(&v_)) return *t;
    if (const auto* b = std::get_if<internal::BorrowedTensor>(&v_)) return b->get();
    type_error("Tensor");
  }
  // A mutable tensor is owned: a borrowed one is copied in place first.
  Tensor& to_tensor() {
    if (auto* t = std::get_if<Tensor>(&v_)) return *t;
    if (is_borrowed()) return v_.emplace<Tensor>(owned_tensor());
    type_error("Tensor");
  }
  int64_t to_int() const {
    if (const auto* i = std::get_if<int64_t>(&v_)) return *i;
    if (const auto* b = std::get_if<bool>(&v_)) return *b;
    type_error("int");
  }
  double to_double() const {  // accepts ints too
    if (const auto* d = std::get_if<double>(&v_)) return *d;
    if (const auto* i = std::get_if<int64_t>(&v_)) return static_cast<double>(*i);
    type_error("float");
  }
  bool to_bool() const {
    if (const auto* b = std::get_if<bool>(&v_)) return *b;
    type_error("bool");
  }
  Scalar to_scalar() const {  // int, double or bool; a wrapped-number tensor too
    if (const auto* i = std::get_if<int64_t>(&v_)) return Scalar(*i);
    if (const auto* d = std::get_if<double>(&v_)) return Scalar(*d);
    if (const auto* b = std::get_if<bool>(&v_)) return Scalar(*b);
    return tensor_to_scalar();
  }
  const std::vector<int64_t>& to_int_list() const;
  const std::vector<double>& to_double_list() const;
  const std::vector<Tensor>& to_tensor_list() const {
    if (const auto* l = std::get_if<std::vector<Tensor>>(&v_)) return *l;
    type_error("Tensor[]");
  }
  std::vector<Tensor>& to_tensor_list() {
    if (auto* l = std::get_if<std::vector<Tensor>>(&v_)) return *l;
    type_error("Tensor[]");
  }
  const std::vector<bool>& to_bool_list() const;
  DType to_dtype() const;
  Device to_device() const;
  const std::string& to_string() const;

  // type_name: "Tensor", "int", "float", "bool", "int[]", "float[]", "Tensor[]", "bool[]",
  // "ScalarType", "Device", "str", "None".
  std::string_view type_name() const;

  // repr: how DebugMode renders a non-tensor value: 1, 2.5, True, [8, 8],
  // torch.float32, cpu, 'str', None. Tensors render as their metadata.
  std::string repr() const;

  friend bool operator==(const Value& a, const Value& b);

 private:
  using Storage = std::variant<std::monostate, Tensor, internal::BorrowedTensor, int64_t, double, bool,
                               std::vector<int64_t>, std::vector<double>, std::vector<Tensor>, DType, Device,
                               std::string, std::vector<bool>>;

  // type_error: throws "expected a value of type <wanted> but got ..." (cold).
  [[noreturn]] void type_error(std::string_view wanted) const;
  // Inline, with to_scalar: a mode's boxed call boxes and unboxes add's alpha.
  static Storage scalar_storage(const Scalar& s) {
    switch (s.kind()) {
      case Scalar::Kind::kInt: return Storage(std::in_place_type<int64_t>, s.to_int());
      case Scalar::Kind::kDouble: return Storage(std::in_place_type<double>, s.to_double());
      case Scalar::Kind::kBool: break;
    }
    return Storage(std::in_place_type<bool>, s.to_bool());
  }
  // tensor_to_scalar: to_scalar of a wrapped-number tensor, or its type error.
  Scalar tensor_to_scalar() const;
  bool is_borrowed() const { return v_.index() == 2; }
  // owned_tensor / owned_storage: a borrowed tensor, owned (a copy: one increment).
  Tensor owned_tensor() const { return std::get_if<internal::BorrowedTensor>(&v_)->get(); }
  Storage owned_storage() const { return Storage(std::in_place_type<Tensor>, owned_tensor()); }

  Storage v_;
};

// Stack: the boxed arguments of a call on entry, its results on return.
// Inline room for kStackInline values: nearly every op has fewer arguments,
// so a boxed call (a mode, the graph runner) allocates no stack memory.
inline constexpr size_t kStackInline = 6;
using Stack = absl::InlinedVector<Value, kStackInline>;

}  // namespace opspec
