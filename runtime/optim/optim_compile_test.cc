// The optimizers' steps under compile (See Note [Compiled optimizer steps]):
// PyTorch 2.x's compiled op sequence, no graph break or value read, values
// within an ulp-scale tolerance of eager's, and the fused backend bit for bit
// equal to the eager backend on the same graph.
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/compile/compile.h"
#include "runtime/compile/controls.h"
#include "runtime/compile/fusion_test_util.h"
#include "runtime/core/compiling.h"
#include "runtime/core/generator.h"
#include "runtime/ops/ops.h"
#include "runtime/optim/adam.h"
#include "runtime/optim/sgd.h"

namespace opspec {
namespace optim_compile_test {

using ::testing::ElementsAre;
using ::testing::Not;
using ::testing::Contains;
using ::testing::HasSubstr;

// Params: an MLP's parameter shapes (few elements), requiring grad, seeded.
std::vector<Tensor> make_params(uint64_t seed) {
  manual_seed(seed);
  std::vector<Tensor> out;
  for (auto sizes : {std::vector<int64_t>{16, 8}, std::vector<int64_t>{16}, std::vector<int64_t>{4, 16}}) {
    Tensor p = ops::randn(sizes);
    p.requires_grad_();
    out.push_back(p);
  }
  return out;
}

// set_grads: step k's gradients (the same for every run of a test).
void set_grads(std::vector<Tensor>& params, int k) {
  manual_seed(100 + static_cast<uint64_t>(k));
  for (Tensor& p : params) p.set_grad(ops::randn(p.sizes()));
}

bool bits_equal(const Tensor& a, const Tensor& b) {
  const Tensor x = ops::contiguous(ops::detach(a)), y = ops::contiguous(ops::detach(b));
  return x.dtype() == y.dtype() && x.numel() == y.numel() &&
         std::memcmp(x.raw_data(), y.raw_data(), static_cast<size_t>(x.nbytes())) == 0;
}

TEST(OptimCompileTest, IsCompilingReachesTheLayersBelowCompile) {
  EXPECT_FALSE(internal::is_compiling_now());
  bool inside = false, public_api = false;
  auto cf = compile([&](const Tensor& x) {
    inside = internal::is_compiling_now();
    public_api = is_compiling();
    return ops::neg(x);
  });
  cf(ops::ones({2}));
  EXPECT_TRUE(inside);
  EXPECT_TRUE(public_api);
  EXPECT_FALSE(internal::is_compiling_now());
}

TEST(OptimCompileTest, AdamWStepTracesPyTorchsCompiledOpsWithoutBreaks) {
  std::vector<Tensor> params = make_params(0);
  optim::AdamW opt({params[0]}, [] {
    optim::AdamOptions o = optim::AdamW::defaults();
    o.lr = 0.1;
    return o;
  }());
  auto cf = compile([&](const std::vector<Tensor>&) { opt.step(); }, {.backend = "eager"});
  for (int k = 0; k < 3; ++k) {
    set_grads(params, k);
    cf(std::vector<Tensor>{});
  }
  const CompileStats stats = cf.stats();
  EXPECT_TRUE(stats.breaks.empty());
  ASSERT_GE(stats.ops_per_graph.size(), 2u);
  // The first step makes the state; later steps run one graph, whatever the step count.
  EXPECT_EQ(stats.compiles, 2);
  EXPECT_THAT(stats.ops_per_graph[1],
              ElementsAre("torch._C::_set_grad_enabled", "aten::add_.Tensor", "aten::mul_.Tensor",
                          "aten::lerp_.Scalar", "aten::mul_.Tensor", "aten::mul.Tensor", "aten::mul.Tensor",
                          "aten::add_.Tensor", "aten::pow.Scalar", "aten::rsub.Scalar", "aten::pow.Scalar",
                          "aten::rsub.Scalar", "aten::reciprocal", "aten::mul.Tensor", "aten::pow.Tensor_Scalar",
                          "aten::sqrt", "aten::div.Tensor", "aten::add_.Tensor", "aten::neg", "aten::div.Tensor",
                          "aten::mul.Tensor", "aten::add_.Tensor", "torch._C::_set_grad_enabled"));
  for (const auto& ops : stats.ops_per_graph) EXPECT_THAT(ops, Not(Contains("aten::_local_scalar_dense")));
  EXPECT_EQ(opt.state(0).step.item().to_double(), 3.0);
}

// run_adamw: three AdamW steps (amsgrad optional) of fresh parameters, compiled
// with backend (empty: eager); the parameters and moments after.
std::vector<Tensor> run_adamw(const std::string& backend, bool amsgrad) {
  std::vector<Tensor> params = make_params(1);
  optim::AdamOptions o = optim::AdamW::defaults();
  o.lr = 0.01;
  o.amsgrad = amsgrad;
  auto opt = std::make_shared<optim::AdamW>(params, o);
  std::optional<CompiledFunction> cf;
  if (!backend.empty()) cf = compile([opt](const std::vector<Tensor>&) { opt->step(); }, {.backend = backend});
  for (int k = 0; k < 3; ++k) {
    set_grads(params, k);
    if (cf) {
      (*cf)(std::vector<Tensor>{});
    } else {
      opt->step();
    }
  }
  std::vector<Tensor> out = params;
  for (size_t i = 0; i < params.size(); ++i) {
    out.push_back(opt->state(i).exp_avg);
    out.push_back(opt->state(i).exp_avg_sq);
  }
  return out;
}

TEST(OptimCompileTest, CompiledAdamWMatchesEagerAndFusedMatchesTheEagerBackendBitForBit) {
  for (bool amsgrad : {false, true}) {
    SCOPED_TRACE(amsgrad ? "amsgrad" : "adamw");
    const std::vector<Tensor> eager = run_adamw("", amsgrad);
    const std::vector<Tensor> compiled = run_adamw("eager", amsgrad);
    const std::vector<Tensor> fused = run_adamw("fused", amsgrad);
    ASSERT_EQ(eager.size(), compiled.size());
    for (size_t k = 0; k < eager.size(); ++k) {
      // The compiled step rounds where PyTorch's does (rewritten addcmul_ and addcdiv_):
      // close to eager's, and the fused kernels are the eager backend's bits.
      EXPECT_TRUE(ops::allclose(compiled[k], eager[k], 1e-5, 1e-7)) << k;
      EXPECT_TRUE(bits_equal(fused[k], compiled[k])) << k;
    }
  }
}

TEST(OptimCompileTest, FusedStepLaunchesFusedKernels) {
  std::vector<Tensor> params = make_params(3);
  auto opt = std::make_shared<optim::AdamW>(params);
  auto cf = compile([opt](const std::vector<Tensor>&) { opt->step(); }, {.backend = "fused"});
  for (int k = 0; k < 2; ++k) {
    set_grads(params, k);
    cf(std::vector<Tensor>{});
  }
  set_grads(params, 2);
  auto recorder = std::make_shared<fusion_test::KernelRecorder>(false);
  {
    KernelObserverGuard guard(recorder);
    cf(std::vector<Tensor>{});
  }
  std::string launched;
  for (const std::string& l : recorder->lines) launched += l + "\n";
  // Per parameter: the moment update, the bias corrections, denom and the update.
  EXPECT_THAT(launched, HasSubstr("[fused] fused_mul_mul_"));
  EXPECT_THAT(launched, HasSubstr("[fused] fused_sqrt_div_add__"));
  EXPECT_THAT(launched, HasSubstr("[fused] fused_div_mul_"));
}

TEST(OptimCompileTest, CompiledSgdScalesBeforeAdding) {
  std::vector<Tensor> params = make_params(2);
  optim::SGD opt({params[0]}, {.lr = 0.1, .momentum = 0.9});
  auto cf = compile([&](const std::vector<Tensor>&) { opt.step(); });
  for (int k = 0; k < 2; ++k) {
    set_grads(params, k);
    cf(std::vector<Tensor>{});
  }
  const CompileStats stats = cf.stats();
  EXPECT_TRUE(stats.breaks.empty());
  ASSERT_EQ(stats.ops_per_graph.size(), 2u);
  // Dynamo's add_(other, alpha=a) is add_(mul(other, a)).
  EXPECT_THAT(stats.ops_per_graph[1],
              ElementsAre("torch._C::_set_grad_enabled", "aten::mul_.Tensor", "aten::mul.Tensor", "aten::add_.Tensor",
                          "aten::mul.Tensor", "aten::add_.Tensor", "torch._C::_set_grad_enabled"));
}

}  // namespace optim_compile_test
}  // namespace opspec
