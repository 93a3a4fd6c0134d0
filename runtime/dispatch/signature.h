// signature.h: checks that a typed kernel's C++ signature matches its op's
// schema, so a wrong kernel fails at registration with a clear message instead
// of misreading its arguments later. The mapping (schema type -> C++ type):
//   Tensor -> const Tensor&        Tensor? -> const std::optional<Tensor>&
//   Tensor[] -> TensorList         Scalar -> const Scalar&
//   Tensor?[] -> OptionalTensorList
//   int, SymInt -> int64_t         int[] -> IntArrayRef   int[]? -> OptionalIntArrayRef
//   bool[3] -> std::array<bool, 3>
//   float -> double   bool -> bool   str -> std::string_view   ScalarType -> DType
//   Device -> Device  Layout, MemoryFormat, Generator -> int64_t
//   X? -> std::optional<X> for the value types above.
// Returns: Tensor -> Tensor, (Tensor, Tensor) -> std::tuple<Tensor, Tensor>,
// Tensor[] -> std::vector<Tensor>, Scalar -> Scalar, () -> void.
#pragma once

#include <string_view>
#include <tuple>
#include <vector>

#include "runtime/dispatch/boxing.h"
#include "runtime/dispatch/schema.h"

namespace opspec::internal {

// CppArgTag: the schema shape a C++ parameter type stands for.
struct CppArgTag {
  TypeKind kind;
  bool list = false;
  bool optional = false;
  bool valid = true;
  bool element_optional = false;  // Tensor?[]
};

template <class T> struct ArgTagOf {
  static constexpr CppArgTag value{TypeKind::kTensor, false, false, false};
};
#define OPSPEC_ARG_TAG(cpp, kind, list, opt) \
  template <> struct ArgTagOf<cpp> { static constexpr CppArgTag value{TypeKind::kind, list, opt}; }
OPSPEC_ARG_TAG(const Tensor&, kTensor, false, false);
OPSPEC_ARG_TAG(Tensor, kTensor, false, false);
OPSPEC_ARG_TAG(const std::optional<Tensor>&, kTensor, false, true);
OPSPEC_ARG_TAG(TensorList, kTensor, true, false);
OPSPEC_ARG_TAG(const Scalar&, kScalar, false, false);
OPSPEC_ARG_TAG(const std::optional<Scalar>&, kScalar, false, true);
OPSPEC_ARG_TAG(int64_t, kInt, false, false);
OPSPEC_ARG_TAG(std::optional<int64_t>, kInt, false, true);
OPSPEC_ARG_TAG(double, kFloat, false, false);
OPSPEC_ARG_TAG(std::optional<double>, kFloat, false, true);
OPSPEC_ARG_TAG(bool, kBool, false, false);
OPSPEC_ARG_TAG(std::optional<bool>, kBool, false, true);
OPSPEC_ARG_TAG(IntArrayRef, kInt, true, false);
OPSPEC_ARG_TAG(OptionalIntArrayRef, kInt, true, true);
OPSPEC_ARG_TAG(std::string_view, kString, false, false);
OPSPEC_ARG_TAG(std::optional<std::string_view>, kString, false, true);
OPSPEC_ARG_TAG(DType, kScalarType, false, false);
OPSPEC_ARG_TAG(std::optional<DType>, kScalarType, false, true);
OPSPEC_ARG_TAG(Device, kDevice, false, false);
OPSPEC_ARG_TAG(std::optional<Device>, kDevice, false, true);
#undef OPSPEC_ARG_TAG
template <> struct ArgTagOf<OptionalTensorList> {  // Tensor?[]
  static constexpr CppArgTag value{TypeKind::kTensor, true, false, true, true};
};
template <> struct ArgTagOf<std::array<bool, 3>> {  // bool[3]
  static constexpr CppArgTag value{TypeKind::kBool, true, false};
};

// ReturnShape: how many returns a C++ return type stands for, and whether it is a list/scalar.
template <class R> struct ReturnShapeOf { static constexpr int count = -1; static constexpr TypeKind kind = TypeKind::kTensor; static constexpr bool list = false; };
template <> struct ReturnShapeOf<Tensor> { static constexpr int count = 1; static constexpr TypeKind kind = TypeKind::kTensor; static constexpr bool list = false; };
template <> struct ReturnShapeOf<Scalar> { static constexpr int count = 1; static constexpr TypeKind kind = TypeKind::kScalar; static constexpr bool list = false; };
template <> struct ReturnShapeOf<std::vector<Tensor>> { static constexpr int count = 1; static constexpr TypeKind kind = TypeKind::kTensor; static constexpr bool list = true; };
template <> struct ReturnShapeOf<void> { static constexpr int count = 0; static constexpr TypeKind kind = TypeKind::kTensor; static constexpr bool list = false; };
template <class... Ts> struct ReturnShapeOf<std::tuple<Ts...>> { static constexpr int count = sizeof...(Ts); static constexpr TypeKind kind = TypeKind::kTensor; static constexpr bool list = false; };

// check_signature_tags: throws opspec::Error describing the first mismatch.
void check_signature_tags(const FunctionSchema& schema, const CppArgTag* args, size_t num_args, int num_returns,
                          TypeKind return_kind, bool return_list, std::string_view where);

// check_kernel_signature: checks fn's parameter and return types against schema.
template <class Ret, class... Args>
void check_kernel_signature(const FunctionSchema& schema, Ret (*)(Args...), std::string_view where) {
  static constexpr CppArgTag kTags[] = {ArgTagOf<Args>::value..., CppArgTag{TypeKind::kTensor}};
  check_signature_tags(schema, kTags, sizeof...(Args), ReturnShapeOf<Ret>::count, ReturnShapeOf<Ret>::kind,
                       ReturnShapeOf<Ret>::list, where);
}

}  // namespace opspec::internal
