// Checks every row of op_table.def and unary_ops.def against the started
// dispatcher, so a row and its registrations cannot drift apart (See Note
// [One row per op]).
#include "runtime/ops/op_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "runtime/core/device_hooks.h"
#include "runtime/core/error.h"
#include "runtime/ops/elementwise_rules.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace op_table_test {

using internal::UnaryKind;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

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

// InPlaceRow: a row's in-place form (See Note [In-place unary ops]).
struct InPlaceRow {
  std::string name;
  Tensor (*functional)(const Tensor&);
  Tensor& (*in_place)(Tensor&);
  UnaryKind rule;
};

std::vector<InPlaceRow> in_place_rows() {
  return {
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary)                                            \
  {#name, [](const Tensor& x) { return ops::name(x); }, [](Tensor& x) -> Tensor& { return ops::name##_(x); }, \
   UnaryKind::dtype_rule},
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
  };
}

// same_values: a and b have one dtype and the same values, NaNs and signed zeros included.
bool same_values(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes()) return false;
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) {
    const bool same = (std::isnan(x[i]) && std::isnan(y[i])) || (x[i] == y[i] && std::signbit(x[i]) == std::signbit(y[i]));
    if (!same) return false;
  }
  return true;
}

TEST(OpTableTest, EveryUnaryRowHasItsInPlaceFormWithTheSameValues) {
  const std::vector<InPlaceRow> rows = in_place_rows();
  ASSERT_EQ(rows.size(), unary_rows().size());
  for (const InPlaceRow& row : rows) {
    SCOPED_TRACE(row.name + "_");
    const OperatorHandle* op = Dispatcher::singleton().find("aten::" + row.name + "_");
    ASSERT_NE(op, nullptr);
    EXPECT_EQ(op->kind(), OpKind::kUnary);
    EXPECT_EQ(op->schema().str(), row.name + "_(Tensor(a!) self) -> Tensor(a!)");
    EXPECT_TRUE(op->schema().is_mutable());
    // The functional op's values: contiguous (the small fast path and, past
    // the grain size, the iterator's), a transposed view, f64.
    const Tensor small = ops::mul(ops::randn({3, 5}), 3.0);
    const Tensor large = ops::mul(ops::randn({70, 300}), 3.0);
    for (const Tensor& src : {small, large, ops::t(large), ops::to(small, DType::kFloat64)}) {
      Tensor x = ops::clone(src);  // src's strides (preserve_format)
      const uint64_t version = x.impl()->version();
      Tensor& r = row.in_place(x);
      EXPECT_TRUE(r.is_same(x));
      EXPECT_GT(x.impl()->version(), version);
      EXPECT_EQ(format_sizes(x.strides()), format_sizes(src.strides()));
      EXPECT_TRUE(same_values(x, row.functional(src))) << "on " << src.meta_str();
    }
    const Tensor b = ops::full({4}, true, {.dtype = DType::kBool});
    const Tensor ints = ops::tensor({-2, 0, 3}, {3}, DType::kInt64);
    const Tensor m = ops::empty({5}, {.dtype = DType::kInt64, .device = kMeta});
    auto in_place = [&](const Tensor& t) {
      Tensor x = t.device().is_meta() ? t : ops::clone(t);
      return row.in_place(x);
    };
    switch (row.rule) {
      case UnaryKind::kFloating:  // the f32 result cannot be written into an integer or b8 self
        EXPECT_THAT([&] { in_place(ints); },
                    ThrowsMessage<Error>(HasSubstr(
                        "aten::" + row.name + "_: result type Float can't be cast to the desired output type Long")));
        EXPECT_THAT([&] { in_place(b); },
                    ThrowsMessage<Error>(HasSubstr("result type Float can't be cast to the desired output type Bool")));
        EXPECT_THAT([&] { in_place(m); }, ThrowsMessage<Error>(HasSubstr("can't be cast to the desired output type")));
        break;
      case UnaryKind::kFloatingOnly:  // the functional op's refusal, naming its kernel
        EXPECT_THAT([&] { in_place(ints); },
                    ThrowsMessage<Error>(HasSubstr("\"" + row.name + "_cpu\" not implemented for 'Long'")));
        EXPECT_THROW(in_place(m), Error);
        break;
      default:  // kKeepDtype, kKeepDtypeBool: integers keep their dtype and values; b8 as the functional op
        EXPECT_TRUE(same_values(in_place(ints), row.functional(ints)));
        if (row.rule == UnaryKind::kKeepDtypeBool) {
          EXPECT_TRUE(same_values(in_place(b), row.functional(b)));
        } else {
          EXPECT_THROW(in_place(b), Error);
        }
        EXPECT_EQ(in_place(m).dtype(), DType::kInt64);
        break;
    }
    // An expanded self is refused, as TensorIterator's assert_no_internal_overlap.
    Tensor e = ops::expand(ops::zeros({3}), {2, 3});
    EXPECT_THAT([&] { row.in_place(e); }, ThrowsMessage<Error>(HasSubstr("more than one element of the written-to")));
  }
}

}  // namespace
}  // namespace opspec
