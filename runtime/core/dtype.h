// dtype.h: DType, the element types a tensor can hold, and their properties.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "runtime/core/error.h"
#include "runtime/core/half.h"

namespace opspec {

// DType: the element type of a tensor. Names follow PyTorch's abbreviations
// (f32, f64, f16, bf16, i64, i32, b8) and torch names (torch.float32, ...).
enum class DType : uint8_t {
  kFloat32,
  kFloat64,
  kFloat16,
  kBFloat16,
  kInt64,
  kInt32,
  kBool,
};

// kNumDTypes: how many DType values there are.
inline constexpr int kNumDTypes = 7;

// kDefaultFloat: the dtype of floating factories when none is given (torch's default).
inline constexpr DType kDefaultFloat = DType::kFloat32;

// element_size: bytes per element.
constexpr int64_t element_size(DType t) {
  switch (t) {
    case DType::kFloat64:
    case DType::kInt64: return 8;
    case DType::kFloat32:
    case DType::kInt32: return 4;
    case DType::kFloat16:
    case DType::kBFloat16: return 2;
    case DType::kBool: return 1;
  }
  return 0;
}

// is_floating: f32, f64, f16, bf16.
constexpr bool is_floating(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16 ||
         t == DType::kBFloat16;
}

// is_integral: i64, i32, and b8 when include_bool.
constexpr bool is_integral(DType t, bool include_bool) {
  return t == DType::kInt64 || t == DType::kInt32 || (include_bool && t == DType::kBool);
}

// dtype_short_name: "f32", "bf16", "b8", ... as DebugMode prints them.
std::string_view dtype_short_name(DType t);

// dtype_torch_name: "torch.float32", ... as PyTorch prints a dtype argument.
std::string_view dtype_torch_name(DType t);

// scalar_type_name: PyTorch's ScalarType name ("Float", "Double", "Half",
// "BFloat16", "Long", "Int", "Bool"), as its error messages print dtypes.
std::string_view scalar_type_name(DType t);

// cpp_type_name: the C++ type's name as caffe2::TypeMeta gives it ("float",
// "long int", "c10::Half", ...), which some of PyTorch's errors print.
std::string_view cpp_type_name(DType t);

// parse_dtype: accepts short names, torch names with or without "torch.",
// and "float"/"double"/"half"/"long"/"int"/"bool". nullopt if unknown.
std::optional<DType> parse_dtype(std::string_view name);

// promote_types: PyTorch's type promotion lattice for two dtypes.
DType promote_types(DType a, DType b);

// CppType<DType>: the C++ storage type of a dtype.
template <DType T> struct CppTypeOf;
template <> struct CppTypeOf<DType::kFloat32> { using type = float; };
template <> struct CppTypeOf<DType::kFloat64> { using type = double; };
template <> struct CppTypeOf<DType::kFloat16> { using type = Half; };
template <> struct CppTypeOf<DType::kBFloat16> { using type = BFloat16; };
template <> struct CppTypeOf<DType::kInt64> { using type = int64_t; };
template <> struct CppTypeOf<DType::kInt32> { using type = int32_t; };
template <> struct CppTypeOf<DType::kBool> { using type = bool; };
template <DType T> using CppType = typename CppTypeOf<T>::type;

// dtype_of<T>: the DType of a C++ storage type.
template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::kFloat32; }
template <> constexpr DType dtype_of<double>() { return DType::kFloat64; }
template <> constexpr DType dtype_of<Half>() { return DType::kFloat16; }
template <> constexpr DType dtype_of<BFloat16>() { return DType::kBFloat16; }
template <> constexpr DType dtype_of<int64_t>() { return DType::kInt64; }
template <> constexpr DType dtype_of<int32_t>() { return DType::kInt32; }
template <> constexpr DType dtype_of<bool>() { return DType::kBool; }

// OPSPEC_DISPATCH_DTYPES(dtype, op_name, ...): runs the lambda-like body with
// `scalar_t` bound to the C++ type of dtype; unknown dtypes raise an Error.
#define OPSPEC_DTYPE_CASE(enum_v, ...)          \
  case ::opspec::DType::enum_v: {               \
    using scalar_t = ::opspec::CppType<::opspec::DType::enum_v>; \
    return __VA_ARGS__();                       \
  }

#define OPSPEC_DISPATCH_ALL_DTYPES(dtype, op_name, ...)                                  \
  [&] {                                                                                  \
    switch (dtype) {                                                                     \
      OPSPEC_DTYPE_CASE(kFloat32, __VA_ARGS__)                                           \
      OPSPEC_DTYPE_CASE(kFloat64, __VA_ARGS__)                                           \
      OPSPEC_DTYPE_CASE(kFloat16, __VA_ARGS__)                                           \
      OPSPEC_DTYPE_CASE(kBFloat16, __VA_ARGS__)                                          \
      OPSPEC_DTYPE_CASE(kInt64, __VA_ARGS__)                                             \
      OPSPEC_DTYPE_CASE(kInt32, __VA_ARGS__)                                             \
      OPSPEC_DTYPE_CASE(kBool, __VA_ARGS__)                                              \
    }                                                                                    \
    ::opspec::internal::throw_error(::opspec::str_cat(op_name, ": unsupported dtype"));    \
  }()

#define OPSPEC_DISPATCH_FLOATING_DTYPES(dtype, op_name, ...)                             \
  [&] {                                                                                  \
    switch (dtype) {                                                                     \
      OPSPEC_DTYPE_CASE(kFloat32, __VA_ARGS__)                                           \
      OPSPEC_DTYPE_CASE(kFloat64, __VA_ARGS__)                                           \
      OPSPEC_DTYPE_CASE(kFloat16, __VA_ARGS__)                                           \
      OPSPEC_DTYPE_CASE(kBFloat16, __VA_ARGS__)                                          \
      default: break;                                                                    \
    }                                                                                    \
    ::opspec::internal::throw_error(::opspec::str_cat(op_name, ": expected a floating dtype, got ", \
                                                   ::opspec::dtype_short_name(dtype)));  \
  }()

}  // namespace opspec
