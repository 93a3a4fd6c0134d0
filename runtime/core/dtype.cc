#include "runtime/core/dtype.h"

#include <array>

namespace opspec {
namespace {

struct DTypeNames {
  DType dtype;
  std::string_view short_name;
  std::string_view torch_name;
};

constexpr std::array<DTypeNames, kNumDTypes> kDTypeNames = {{
    {DType::kFloat32, "f32", "torch.float32"},
    {DType::kFloat64, "f64", "torch.float64"},
    {DType::kFloat16, "f16", "torch.float16"},
    {DType::kBFloat16, "bf16", "torch.bfloat16"},
    {DType::kInt64, "i64", "torch.int64"},
    {DType::kInt32, "i32", "torch.int32"},
    {DType::kBool, "b8", "torch.bool"},
}};

}  // namespace

std::string_view dtype_short_name(DType t) { return kDTypeNames[static_cast<int>(t)].short_name; }
std::string_view dtype_torch_name(DType t) { return kDTypeNames[static_cast<int>(t)].torch_name; }

std::string_view scalar_type_name(DType t) {
  static constexpr std::string_view kScalarTypeNames[kNumDTypes] = {"Float", "Double", "Half", "BFloat16",
                                                                     "Long",  "Int",    "Bool"};
  return kScalarTypeNames[static_cast<int>(t)];
}

std::string_view cpp_type_name(DType t) {
  static constexpr std::string_view kCppTypeNames[kNumDTypes] = {"float",    "double", "c10::Half", "c10::BFloat16",
                                                                 "long int", "int",    "bool"};
  return kCppTypeNames[static_cast<int>(t)];
}

std::optional<DType> parse_dtype(std::string_view name) {
  if (name.starts_with("torch.")) name.remove_prefix(6);
  for (const auto& n : kDTypeNames) {
    if (name == n.short_name || name == n.torch_name.substr(6)) return n.dtype;
  }
  struct Alias { std::string_view name; DType dtype; };
  static constexpr Alias kAliases[] = {
      {"float", DType::kFloat32}, {"double", DType::kFloat64}, {"half", DType::kFloat16},
      {"long", DType::kInt64},    {"int", DType::kInt32},      {"bool", DType::kBool},
      {"f8", DType::kFloat64}, {"float32", DType::kFloat32},
  };
  for (const auto& a : kAliases) {
    if (name == a.name) return a.dtype;
  }
  return std::nullopt;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  // Indexed by DType order: f32, f64, f16, bf16, i64, i32, b8 (PyTorch's table restricted).
  using enum DType;
  static constexpr DType kTable[kNumDTypes][kNumDTypes] = {
      /* f32  */ {kFloat32, kFloat64, kFloat32, kFloat32, kFloat32, kFloat32, kFloat32},
      /* f64  */ {kFloat64, kFloat64, kFloat64, kFloat64, kFloat64, kFloat64, kFloat64},
      /* f16  */ {kFloat32, kFloat64, kFloat16, kFloat32, kFloat16, kFloat16, kFloat16},
      /* bf16 */ {kFloat32, kFloat64, kFloat32, kBFloat16, kBFloat16, kBFloat16, kBFloat16},
      /* i64  */ {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt64, kInt64},
      /* i32  */ {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kInt32},
      /* b8   */ {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kBool},
  };
  return kTable[static_cast<int>(a)][static_cast<int>(b)];
}

}  // namespace opspec
