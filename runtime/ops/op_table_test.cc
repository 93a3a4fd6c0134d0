// Checks every row of op_table.def and unary_ops.def against the started
// dispatcher, so a row and its registrations cannot drift apart (See Note
// [One row per op]).
#include "runtime/ops/op_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "runtime/core/device_hooks.h"
#include "runtime/core/error.h"
#include "runtime/ops/elementwise_rules.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace op_table_test {

using internal::UnaryKind;

TEST(OpTableTest, EveryRowIsRegisteredAsItsTableSays) {
  const bool cuda_built = get_device_hooks(DeviceType::kCUDA).is_built();
  for (const BuiltinOpInfo& row : builtin_op_table()) {
    const OperatorHandle& op = builtin_op(row.id);
    SCOPED_TRACE(op.name());
    EXPECT_EQ(op.id(), static_cast<int>(row.id));
    EXPECT_EQ(op.kind(), row.kind);
    // The composite column is the truth about CompositeImplicit.
    EXPECT_EQ(op.is_composite(), row.composite);
    EXPECT_EQ(op.has_kernel(DispatchKey::kCompositeImplicit), row.composite);
    if (row.composite) continue;
    // Every other op runs on every backend: fake tensors need Meta kernels.
    EXPECT_TRUE(op.has_kernel(DispatchKey::kMeta)) << "no Meta kernel";
    EXPECT_TRUE(op.has_kernel(DispatchKey::kCPU)) << "no CPU kernel";
    if (cuda_built) {
      EXPECT_TRUE(op.has_kernel(DispatchKey::kCUDA)) << "no CUDA kernel";
    }
  }
}

// UnaryRow: one row of unary_ops.def.
struct UnaryRow {
  std::string name;
  Tensor (*fn)(const Tensor&, const std::source_location&);
  UnaryKind rule;
};

std::vector<UnaryRow> unary_rows() {
  return {
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) \
  {#name, [](const Tensor& x, const std::source_location& loc) { return ops::name(x, loc); }, UnaryKind::dtype_rule},
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
  };
}

TEST(OpTableTest, EveryUnaryRowIsAnElementwiseOpWithItsDtypeRule) {
  for (const UnaryRow& row : unary_rows()) {
    SCOPED_TRACE(row.name);
    const OperatorHandle* op = Dispatcher::singleton().find("aten::" + row.name);
    ASSERT_NE(op, nullptr);
    EXPECT_EQ(op->kind(), OpKind::kUnary);
    EXPECT_EQ(op->name(), "aten::" + row.name);
    EXPECT_EQ(op->schema().str(), row.name + "(Tensor self) -> Tensor");
    const Tensor f = row.fn(ops::full({2, 3}, 0.5), std::source_location::current());
    EXPECT_EQ(f.dtype(), DType::kFloat32);
    EXPECT_EQ(format_sizes(f.sizes()), "[2, 3]");
    const Tensor b = ops::full({4}, true, {.dtype = DType::kBool});
    const Tensor i4 = ops::full({4}, 2, {.dtype = DType::kInt32});
    const Tensor m = ops::empty({5}, {.dtype = DType::kInt64, .device = kMeta});
    auto call = [&](const Tensor& x) { return row.fn(x, std::source_location::current()); };
    switch (row.rule) {
      case UnaryKind::kFloating:  // integers and b8 compute in f32
        EXPECT_EQ(call(i4).dtype(), DType::kFloat32);
        EXPECT_EQ(call(b).dtype(), DType::kFloat32);
        EXPECT_EQ(call(m).dtype(), DType::kFloat32);
        break;
      case UnaryKind::kFloatingOnly:  // no promotion: refused, on Meta alike
        EXPECT_THROW(call(i4), Error);
        EXPECT_THROW(call(b), Error);
        EXPECT_THROW(call(m), Error);
        break;
      default:  // kKeepDtype, kKeepDtypeBool: the dtype kept; b8 only for kKeepDtypeBool
        EXPECT_EQ(call(i4).dtype(), DType::kInt32);
        if (row.rule == UnaryKind::kKeepDtypeBool) {
          EXPECT_EQ(call(b).dtype(), DType::kBool);
        } else {
          EXPECT_THROW(call(b), Error);
        }
        // Meta tensors take the same rule, with no data.
        EXPECT_TRUE(call(m).device().is_meta());
        EXPECT_EQ(call(m).dtype(), DType::kInt64);
        break;
    }
  }
}

}  // namespace
}  // namespace opspec
