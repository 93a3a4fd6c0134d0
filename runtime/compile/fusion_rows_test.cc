// Every row of unary_ops.def fuses on the CPU and gives eager's bits (See
// Note [One row per op]); the CUDA code generator's side is covered by
// kernels/cuda/fused_codegen_test.cc, which generates every FusedOp.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "runtime/compile/backend.h"
#include "runtime/compile/fusion.h"
#include "runtime/core/generator.h"
#include "runtime/ops/elementwise_rules.h"
#include "runtime/ops/ops.h"
#include "runtime/trace/make_fx.h"

namespace opspec {
namespace fusion_rows_test {

using internal::UnaryKind;

struct UnaryRow {
  std::string name;
  Tensor (*fn)(const Tensor&);
  UnaryKind rule;
};

std::vector<UnaryRow> unary_rows() {
  return {
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) \
  {#name, [](const Tensor& x) { return ops::name(x); }, UnaryKind::dtype_rule},
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
  };
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.numel() == b.numel() && a.is_contiguous() && b.is_contiguous() &&
         std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.nbytes())) == 0;
}

TEST(FusionRowsTest, EveryUnaryRowFusesAndMatchesEagerBitForBit) {
  manual_seed(7);
  // Values where the math is defined for every row (log, sqrt, rsqrt need > 0).
  const Tensor x = ops::add(ops::rand({3, 4096}), 0.125);
  const Tensor i = ops::arange(-6000, 6288, {.dtype = DType::kInt32});
  for (const UnaryRow& row : unary_rows()) {
    SCOPED_TRACE(row.name);
    for (const Tensor& in : {x, i}) {
      // A chain around the op, so the group has more than one member; integer
      // inputs stay integers up to the op (a kFloating row then casts to f32,
      // a kFloatingOnly row refuses them, as eager does).
      const bool integral = in.dtype() == DType::kInt32;
      if (integral && row.rule == UnaryKind::kFloatingOnly) continue;
      auto chain = [&](const Tensor& a) {
        return ops::mul(row.fn(integral ? ops::mul(a, 3) : ops::mul(a, 0.75)), 2);
      };
      Graph g = make_fx(chain)(in);
      const std::vector<FusionGroup> groups = partition_graph(g);
      ASSERT_EQ(groups.size(), 1u) << g.str();
      EXPECT_EQ(groups[0].name, "fused_mul_" + row.name + "_mul_0");
      const Tensor want = chain(in);
      const std::vector<Tensor> got = fused_backend(g, {in})({in});
      ASSERT_EQ(got.size(), 1u);
      EXPECT_TRUE(same_bits(got[0], want)) << in.meta_str();
    }
  }
}

}  // namespace
}  // namespace opspec
