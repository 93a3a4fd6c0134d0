// Tests of gradcheck (gradcheck.cc) on inputs laid out otherwise than
// row-major: elements are perturbed in the order outputs and gradients read
// them, so a right formula passes and a wrong one fails whatever the layout.
#include "harness/expect/gradcheck.h"

#include <gtest/gtest.h>

#include "runtime/core/generator.h"
#include "runtime/core/memory_format.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace {

// Elementwise by a tensor of distinct weights: a permuted perturbation shows
// as a Jacobian whose diagonal moved.
std::vector<Tensor> weighted(const std::vector<Tensor>& in) {
  const Tensor w = ops::arange(static_cast<double>(in[0].numel()), {.dtype = DType::kFloat64});
  return {ops::mul(in[0], ops::add(ops::reshape(w, in[0].sizes()), 1.0))};
}

// d/dx of x * detach(x) is taken as detach(x) by backward, 2x by differences.
std::vector<Tensor> half_detached(const std::vector<Tensor>& in) { return {ops::mul(in[0], ops::detach(in[0]))}; }

TEST(GradcheckTest, ChannelsLastInputKeepsItsLayoutAndPasses) {
  manual_seed(3);
  const Tensor x = ops::contiguous(ops::randn({1, 3, 2, 2}, {.dtype = DType::kFloat64}), MemoryFormat::kChannelsLast);
  ASSERT_FALSE(x.is_contiguous());
  std::vector<int64_t> seen;
  const TracedFunction fn = [&](const std::vector<Tensor>& in) {
    seen.assign(in[0].strides().begin(), in[0].strides().end());
    return weighted(in);
  };
  const CheckResult r = gradcheck(fn, {x.detach().requires_grad_()});
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(seen, (std::vector<int64_t>{12, 1, 6, 3}));  // the function saw a channels-last input
}

TEST(GradcheckTest, TransposedInputPasses) {
  manual_seed(4);
  const Tensor x = ops::t(ops::randn({3, 4}, {.dtype = DType::kFloat64}));
  const CheckResult r = gradcheck(weighted, {x.detach().requires_grad_()});
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(GradcheckTest, WrongGradientFailsOnAChannelsLastInput) {
  manual_seed(5);
  const Tensor x = ops::contiguous(ops::randn({1, 2, 2, 2}, {.dtype = DType::kFloat64}), MemoryFormat::kChannelsLast);
  const CheckResult r = gradcheck(half_detached, {x.detach().requires_grad_()});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("Jacobian mismatch for output 0 with respect to input 0"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace opspec
