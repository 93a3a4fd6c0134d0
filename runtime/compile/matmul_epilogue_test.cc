// Tests of the fused backend's matmul epilogues (See Note [Matmul epilogues]
// in runtime/fused/matmul_epilogue.h): which linears a group finishes, the
// bits against eager, the kernel record, and the fallback when the device
// declines.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/compile/backend.h"
#include "runtime/compile/compile.h"
#include "runtime/compile/fusion.h"
#include "runtime/compile/fusion_test_util.h"
#include "runtime/compile/logging.h"
#include "runtime/core/generator.h"
#include "runtime/core/grad_mode.h"
#include "runtime/core/parallel.h"
#include "runtime/dispatch/kernel_record.h"
#include "runtime/fused/matmul_epilogue.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace matmul_epilogue_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using fusion_test::bits_equal;
using fusion_test::names;

// Compiled: fn compiled with the fused backend, keeping the groups of its graphs.
struct Compiled {
  std::shared_ptr<std::vector<std::string>> groups;
  CompiledFunction fn;
};

template <class Fn>
Compiled compile_fused(Fn fn) {
  auto groups = std::make_shared<std::vector<std::string>>();
  return Compiled{groups, compile(fn, {.backend_fn = [groups](const Graph& g, const std::vector<Tensor>& inputs) {
                                         for (const std::string& n : names(partition_graph(g))) groups->push_back(n);
                                         return fused_backend(g, inputs);
                                       }})};
}

// GPT-2's MLP and residual: x + c_proj(gelu(c_fc(x))), with products large
// enough to be cut into blocks on the threads.
Tensor mlp(const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2) {
  return ops::add(x, ops::linear(ops::gelu(ops::linear(x, w1, b1), "tanh"), w2, b2));
}

TEST(MatmulEpilogueTest, GeluAndResidualAddFinishTheirLinears) {
  manual_seed(7);
  const Tensor x = ops::randn({4, 64, 64}), w1 = ops::randn({256, 64}), b1 = ops::randn({256});
  const Tensor w2 = ops::randn({64, 256}), b2 = ops::randn({64});
  Compiled c = compile_fused(mlp);
  const Tensor want = mlp(x, w1, b1, w2, b2);
  for (const int threads : {2, 1}) {
    NumThreadsGuard guard(threads);
    const std::vector<Tensor> got = c.fn(x, w1, b1, w2, b2);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(bits_equal(got[0], want)) << threads << " thread(s)";
  }
  EXPECT_THAT(*c.groups, ElementsAre("fused_linear_gelu_0", "fused_linear_add_1"));
}

TEST(MatmulEpilogueTest, LinearsWithoutBiasAndTwoDimInputs) {
  manual_seed(8);
  const Tensor x = ops::randn({96, 40}), w = ops::randn({72, 40}), y = ops::randn({96, 72});
  const Tensor xt = ops::randn({40, 96});
  // A transposed 2-D input is read by BLAS where it lies, as addmm reads it.
  auto fn = [](const Tensor& x, const Tensor& w, const Tensor& y, const Tensor& xt) {
    return std::vector<Tensor>{ops::relu(ops::linear(x, w)) * y, ops::sigmoid(ops::linear(ops::t(xt), w))};
  };
  Compiled c = compile_fused(fn);
  const std::vector<Tensor> want = fn(x, w, y, xt), got = c.fn(x, w, y, xt);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(bits_equal(got[0], want[0]));
  EXPECT_TRUE(bits_equal(got[1], want[1]));
  EXPECT_THAT(*c.groups, ElementsAre("fused_linear_relu_mul_0", "fused_linear_sigmoid_1"));
}

TEST(MatmulEpilogueTest, ALinearReadByOthersOrSeparatedByAMutationRunsAlone) {
  manual_seed(9);
  const Tensor x = ops::randn({8, 16}), w = ops::randn({16, 16}), b = ops::randn({16});
  // Returned as well as read by the group: the product must survive.
  auto returned = [](const Tensor& x, const Tensor& w, const Tensor& b) {
    const Tensor y = ops::linear(x, w, b);
    return std::vector<Tensor>{y, ops::relu(y)};
  };
  // Read by a reduction too.
  auto reduced = [](const Tensor& x, const Tensor& w, const Tensor& b) {
    const Tensor y = ops::linear(x, w, b);
    return std::vector<Tensor>{ops::relu(y), ops::sum(y)};
  };
  // Its input written between the linear and the group: the linear may not move past that.
  auto mutated = [](const Tensor& x, const Tensor& w, const Tensor& b) {
    Tensor h = ops::neg(x);
    const Tensor y = ops::linear(h, w, b);
    ops::add_(h, x);
    return std::vector<Tensor>{ops::relu(y), h};
  };
  for (auto* fn : {+returned, +reduced, +mutated}) {
    Compiled c = compile_fused(fn);
    const std::vector<Tensor> want = fn(x, w, b), got = c.fn(x, w, b);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) EXPECT_TRUE(bits_equal(got[k], want[k]));
    for (const std::string& g : *c.groups) EXPECT_THAT(g, ::testing::Not(HasSubstr("linear")));
  }
}

TEST(MatmulEpilogueTest, ALinearDoesNotMovePastAGradModeChange) {
  manual_seed(13);
  const Tensor x = ops::randn({8, 16}), w = ops::randn({16, 16}), b = ops::randn({16});
  auto fn = [](const Tensor& x, const Tensor& w, const Tensor& b) {
    Tensor y;
    {
      autograd::NoGradGuard no_grad;
      y = ops::linear(x, w, b);
    }
    return ops::relu(y);
  };
  Compiled c = compile_fused(fn);
  EXPECT_TRUE(bits_equal(c.fn(x, w, b)[0], fn(x, w, b)));
  for (const std::string& g : *c.groups) EXPECT_THAT(g, ::testing::Not(HasSubstr("linear")));
}

TEST(MatmulEpilogueTest, HalfPrecisionLinearsAreNotFinishedByGroups) {
  manual_seed(10);
  const Tensor x = ops::to(ops::randn({8, 16}), DType::kFloat16), w = ops::to(ops::randn({16, 16}), DType::kFloat16);
  auto fn = [](const Tensor& x, const Tensor& w) { return ops::relu(ops::linear(x, w)); };
  Compiled c = compile_fused(fn);
  EXPECT_TRUE(bits_equal(c.fn(x, w)[0], fn(x, w)));
  EXPECT_TRUE(c.groups->empty());
}

TEST(MatmulEpilogueTest, RecordsOneKernelWithTheLinearsArguments) {
  manual_seed(11);
  const Tensor x = ops::randn({6, 8}), w = ops::randn({4, 8}), b = ops::randn({4}), r = ops::randn({6, 4});
  auto fn = [](const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& r) {
    return ops::add(r, ops::linear(x, w, b));
  };
  Compiled c = compile_fused(fn);
  c.fn(x, w, b, r);  // compiles
  auto recorder = std::make_shared<fusion_test::KernelRecorder>(/*done_lines=*/true);
  std::vector<Tensor> got;
  {
    KernelObserverGuard guard(recorder);
    got = c.fn(x, w, b, r);
  }
  EXPECT_TRUE(bits_equal(got[0], fn(x, w, b, r)));
  EXPECT_THAT(recorder->lines, ElementsAre("[fused] fused_linear_add_0(in0=f32[6, 8] in1=f32[4, 8] in2=f32[4] "
                                           "in3=f32[6, 4] out0=f32[6, 4] n=24 )",
                                           "done"));
}

TEST(MatmulEpilogueTest, LogsTheLinearAsAMember) {
  const Tensor x = ops::randn({6, 8}), w = ops::randn({4, 8}), b = ops::randn({4});
  Compiled c = compile_fused([](const Tensor& x, const Tensor& w, const Tensor& b) {
    return ops::gelu(ops::linear(x, w, b));
  });
  const std::string log = fusion_test::fusion_log([&] { c.fn(x, w, b); });
  EXPECT_THAT(log, HasSubstr("[opspec:fusion] fused_linear_gelu_0: aten::linear, aten::gelu -> 1 kernel, 3 inputs, "
                             "1 output\n"));
  EXPECT_THAT(log, HasSubstr("1 fused kernel(s) for 2 of 2 call node(s)"));
}

TEST(MatmulEpilogueTest, WithoutADeviceRunnerTheLinearRunsThenTheGroup) {
  manual_seed(12);
  const Tensor x = ops::randn({4, 64, 64}), w1 = ops::randn({256, 64}), b1 = ops::randn({256});
  const Tensor w2 = ops::randn({64, 256}), b2 = ops::randn({64});
  Compiled c = compile_fused(mlp);
  const internal::LinearBlocksFn saved = internal::linear_blocks(DeviceType::kCPU);
  internal::register_linear_blocks(DeviceType::kCPU, nullptr);
  std::vector<Tensor> got;
  try {
    got = c.fn(x, w1, b1, w2, b2);
  } catch (...) {
    internal::register_linear_blocks(DeviceType::kCPU, saved);
    throw;
  }
  internal::register_linear_blocks(DeviceType::kCPU, saved);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(bits_equal(got[0], mlp(x, w1, b1, w2, b2)));
  EXPECT_THAT(*c.groups, ElementsAre("fused_linear_gelu_0", "fused_linear_add_1"));
}

}  // namespace matmul_epilogue_test
}  // namespace opspec
