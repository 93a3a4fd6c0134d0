// split_test.cc: split.Tensor, split_with_sizes, unbind.int and chunk:
// values and views, PyTorch's errors, dtypes, empty and strided inputs,
// chunk's decomposition, Meta, fake tensors, make_fx graphs (getitems),
// compile on every backend, and autograd (split_backward and friends).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/autograd/autograd_test_util.h"
#include "runtime/compile/compile.h"
#include "runtime/core/generator.h"
#include "runtime/dispatch/mode.h"
#include "runtime/fake/fake_tensor.h"
#include "runtime/graph/interpreter.h"
#include "runtime/ops/ops.h"
#include "runtime/trace/make_fx.h"
#include "runtime/dispatch/op_names_test_util.h"

namespace opspec {
namespace split_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

std::vector<int64_t> vec(IntArrayRef r) { return {r.begin(), r.end()}; }

Tensor arange_f(int64_t n, IntArrayRef shape) {
  return ops::view(ops::arange(0, n, {.dtype = DType::kFloat32}), shape);
}

using OpNames = test_util::OpNames;  // records the names of the ops it sees

TEST(SplitTest, SplitGivesViewsWithASmallerLast) {
  Tensor x = arange_f(10, {5, 2});
  std::vector<Tensor> parts = ops::split(x, 2);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_THAT(vec(parts[0].sizes()), ElementsAre(2, 2));
  EXPECT_THAT(vec(parts[2].sizes()), ElementsAre(1, 2));
  EXPECT_THAT(parts[1].to_vector<float>(), ElementsAre(4, 5, 6, 7));
  EXPECT_THAT(parts[2].to_vector<float>(), ElementsAre(8, 9));
  EXPECT_EQ(parts[2].storage_offset(), 8);
  for (const Tensor& p : parts) EXPECT_TRUE(p.is_alias_of(x));
  // Along dim 1 (and -1): views with self's strides.
  std::vector<Tensor> cols = ops::split(x, 1, -1);
  ASSERT_EQ(cols.size(), 2u);
  EXPECT_THAT(cols[1].to_vector<float>(), ElementsAre(1, 3, 5, 7, 9));
  EXPECT_THAT(vec(cols[1].strides()), ElementsAre(2, 1));
  // split_size beyond the dim: one piece, the whole dim.
  EXPECT_EQ(ops::split(x, 7).size(), 1u);
  EXPECT_THAT(vec(ops::split(x, 7)[0].sizes()), ElementsAre(5, 2));
  // An empty dim with split_size 0: one empty piece, as ATen's get_num_splits.
  std::vector<Tensor> empty = ops::split(ops::zeros({0, 3}), 0);
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_THAT(vec(empty[0].sizes()), ElementsAre(0, 3));
}

TEST(SplitTest, SplitWithSizesAndUnbind) {
  Tensor x = arange_f(12, {2, 6});
  std::vector<Tensor> parts = ops::split_with_sizes(x, {1, 0, 5}, 1);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_THAT(parts[0].to_vector<float>(), ElementsAre(0, 6));
  EXPECT_THAT(vec(parts[1].sizes()), ElementsAre(2, 0));
  EXPECT_THAT(parts[2].to_vector<float>(), ElementsAre(1, 2, 3, 4, 5, 7, 8, 9, 10, 11));
  std::vector<Tensor> rows = ops::unbind(x);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_THAT(vec(rows[1].sizes()), ElementsAre(6));
  EXPECT_THAT(rows[1].to_vector<float>(), ElementsAre(6, 7, 8, 9, 10, 11));
  std::vector<Tensor> cols = ops::unbind(x, -1);
  ASSERT_EQ(cols.size(), 6u);
  EXPECT_THAT(cols[4].to_vector<float>(), ElementsAre(4, 10));
  EXPECT_TRUE(cols[4].is_alias_of(x));
  EXPECT_TRUE(ops::unbind(ops::zeros({0, 2})).empty());
}

TEST(SplitTest, StridedInputsAndDtypes) {
  Tensor x = ops::t(arange_f(6, {2, 3}));  // [3, 2], strides [1, 3]
  std::vector<Tensor> parts = ops::split(x, 2);
  EXPECT_THAT(parts[0].to_vector<float>(), ElementsAre(0, 3, 1, 4));
  EXPECT_THAT(parts[1].to_vector<float>(), ElementsAre(2, 5));
  EXPECT_THAT(vec(parts[1].strides()), ElementsAre(1, 3));
  for (DType t : {DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt64, DType::kInt32, DType::kBool}) {
    Tensor y = ops::ones({4, 2}, {.dtype = t});
    std::vector<Tensor> u = ops::unbind(y, 1);
    ASSERT_EQ(u.size(), 2u);
    EXPECT_EQ(u[0].dtype(), t);
    EXPECT_EQ(ops::chunk(y, 3).size(), 2u);
  }
}

TEST(SplitTest, ErrorsArePyTorchs) {
  Tensor s = ops::scalar_tensor(1.0);
  Tensor x = ops::ones({4});
  EXPECT_THAT([&] { ops::split(s, 1); }, ThrowsMessage<Error>(HasSubstr("split expects at least a 1-dimensional tensor")));
  EXPECT_THAT([&] { ops::split(x, -1); },
              ThrowsMessage<Error>(HasSubstr("split expects split_size be non-negative, but got split_size=-1")));
  EXPECT_THAT([&] { ops::split(x, 0); },
              ThrowsMessage<Error>(HasSubstr(
                  "split_size can only be 0 if dimension size is 0, but got dimension size of 4")));
  EXPECT_THAT([&] { ops::split(x, 2, 1); },
              ThrowsMessage<Error>(HasSubstr("Dimension out of range (expected to be in range of [-1, 0], but got 1)")));
  EXPECT_THAT([&] { ops::split_with_sizes(x, {1, -1, 4}); },
              ThrowsMessage<Error>(HasSubstr("split_with_sizes expects split_sizes have only non-negative entries, "
                                             "but got split_sizes=[1, -1, 4]")));
  EXPECT_THAT([&] { ops::split_with_sizes(x, {1, 1}); },
              ThrowsMessage<Error>(HasSubstr("split_with_sizes expects split_sizes to sum exactly to 4 (input "
                                             "tensor's size at dimension 0), but got split_sizes=[1, 1]")));
  EXPECT_THAT([&] { ops::unbind(s); },
              ThrowsMessage<Error>(HasSubstr("Dimension specified as 0 but tensor has no dimensions")));
  EXPECT_THAT([&] { ops::unbind(x, 1); }, ThrowsMessage<Error>(HasSubstr("Dimension out of range")));
  EXPECT_THAT([&] { ops::chunk(x, 0); },
              ThrowsMessage<Error>(HasSubstr("chunk expects `chunks` to be greater than 0, got: 0")));
  EXPECT_THAT([&] { ops::chunk(s, 2); },
              ThrowsMessage<Error>(HasSubstr("chunk expects at least a 1-dimensional tensor")));
}

TEST(SplitTest, ChunkDecomposesAsATen) {
  Tensor x = ops::ones({5, 2});
  OpNames log;
  std::vector<Tensor> c;
  {
    ModeGuard g(log);
    c = ops::chunk(x, 3);
  }
  EXPECT_THAT(log.names, ElementsAre("aten::split.Tensor"));  // split_size ceil(5 / 3) = 2
  ASSERT_EQ(c.size(), 3u);
  EXPECT_THAT(vec(c[2].sizes()), ElementsAre(1, 2));
  // An empty dim keeps `chunks` empty pieces through split_with_sizes.
  log.names.clear();
  {
    ModeGuard g(log);
    c = ops::chunk(ops::zeros({2, 0}), 3, -1);
  }
  EXPECT_THAT(log.names, ElementsAre("aten::zeros", "aten::split_with_sizes"));
  ASSERT_EQ(c.size(), 3u);
  EXPECT_THAT(vec(c[1].sizes()), ElementsAre(2, 0));
  // More chunks than elements: fewer pieces, as PyTorch.
  EXPECT_EQ(ops::chunk(ops::ones({2}), 5).size(), 2u);
}

TEST(SplitTest, MetaAndFakeTensors) {
  Tensor m = ops::empty({7, 3}, {.device = kMeta});
  std::vector<Tensor> parts = ops::split(m, 3);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_TRUE(parts[2].device().is_meta());
  EXPECT_THAT(vec(parts[2].sizes()), ElementsAre(1, 3));
  EXPECT_THAT([&] { ops::split_with_sizes(m, {3, 3}); }, ThrowsMessage<Error>(HasSubstr("sum exactly to 7")));
  Tensor real = ops::ones({2, 4});
  FakeTensorMode fake;
  ModeGuard g(fake);
  Tensor f = fake.from_real(real);
  std::vector<Tensor> u = ops::unbind(f, 1);
  ASSERT_EQ(u.size(), 4u);
  EXPECT_TRUE(is_fake(u[3]));
  EXPECT_THAT(vec(u[3].sizes()), ElementsAre(2));
}

TEST(SplitTest, MakeFxRecordsGetitems) {
  manual_seed(0);
  auto f = [](const Tensor& x) {
    std::vector<Tensor> p = ops::split(x, 2);
    return ops::add(p[0], p[1]);
  };
  Tensor x = ops::randn({4, 3});
  Graph g = make_fx(f)(x);
  EXPECT_EQ(g.str(),
            "%arg0_1 = placeholder : f32[4, 3]\n"
            "%split = aten::split.Tensor(%arg0_1, 2) : [f32[2, 3], f32[2, 3]]\n"
            "%getitem = getitem(%split, 0) : f32[2, 3]\n"
            "%getitem_1 = getitem(%split, 1) : f32[2, 3]\n"
            "%add = aten::add.Tensor(%getitem, %getitem_1) : f32[2, 3]\n"
            "return %add\n");
  EXPECT_TRUE(ops::equal(run_graph(g, {x})[0], f(x)));
  // A list of one still goes through a getitem; chunk traces as its split.
  auto one = [](const Tensor& x) { return ops::chunk(x, 1, 1)[0]; };
  Graph g1 = make_fx(one)(x);
  EXPECT_EQ(g1.str(),
            "%arg0_1 = placeholder : f32[4, 3]\n"
            "%split = aten::split.Tensor(%arg0_1, 3, 1) : [f32[4, 3]]\n"
            "%getitem = getitem(%split, 0) : f32[4, 3]\n"
            "return %getitem\n");
  EXPECT_TRUE(ops::equal(run_graph(g1, {x})[0], x));
  // pre_dispatch keeps chunk whole.
  Graph pre = make_fx(one, {.pre_dispatch = true})(x);
  EXPECT_THAT(pre.str(), HasSubstr("aten::chunk(%arg0_1, 1, 1)"));
}

TEST(SplitTest, CompiledEqualsEagerOnEveryBackend) {
  manual_seed(1);
  auto f = [](const Tensor& x) {
    std::vector<Tensor> p = ops::chunk(x, 3, 1);
    std::vector<Tensor> r = ops::unbind(p[0]);
    std::vector<Tensor> s = ops::split_with_sizes(x, {1, 3}, 0);
    return std::vector<Tensor>{ops::mul(ops::relu(p[1]), p[2]), ops::add(r[0], r[3]), ops::exp(s[1])};
  };
  const Tensor x = ops::randn({4, 6});
  const std::vector<Tensor> want = f(x);
  for (const char* backend : {"eager", "aot_eager", "fused"}) {
    SCOPED_TRACE(backend);
    auto cf = compile(f, {.backend = backend, .input_names = {"x"}});
    for (int call = 0; call < 3; ++call) {  // the first captures; later ones replay
      const std::vector<Tensor> got = cf(x);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(ops::allclose(got[i], want[i])) << i;
    }
    EXPECT_EQ(cf.stats().compiles, 1);
    EXPECT_EQ(cf.stats().breaks.size(), 0u);
  }
}

TEST(SplitTest, CompiledPiecesAndGradients) {
  // The pieces themselves as the compiled function's results (views of its input).
  auto pieces = [](const Tensor& x) { return ops::split(x, 2, 1); };
  const Tensor x = ops::view(ops::arange(0, 12, {.dtype = DType::kFloat32}), {2, 6});
  for (const char* backend : {"eager", "aot_eager", "fused"}) {
    SCOPED_TRACE(backend);
    auto cf = compile(pieces, {.backend = backend, .input_names = {"x"}});
    for (int call = 0; call < 2; ++call) {
      const std::vector<Tensor> got = cf(x);
      ASSERT_EQ(got.size(), 3u);
      EXPECT_THAT(got[2].to_vector<float>(), ElementsAre(4, 5, 10, 11));
    }
  }
  // Gradients through a compiled graph (aot_eager traces split's backward: cat).
  using namespace autograd_test;
  auto f = [](const Tensor& x) {
    std::vector<Tensor> r = ops::unbind(x, 1);
    std::vector<Tensor> p = ops::split(x, 1);
    return ops::sum(ops::mul(ops::mul(r[0], r[2]), ops::exp(p[1])));
  };
  Tensor eager_x = leaf({3, 3}, 11);
  f(eager_x).backward();
  for (const char* backend : {"eager", "aot_eager"}) {
    SCOPED_TRACE(backend);
    Tensor cx = leaf({3, 3}, 11);
    auto cf = compile(f, {.backend = backend, .input_names = {"x"}});
    cf(cx)[0].backward();
    ASSERT_TRUE(cx.grad().defined());
    EXPECT_TRUE(ops::allclose(cx.grad(), eager_x.grad()));
  }
}

TEST(SplitTest, BackwardCatsWithZerosForUnusedPieces) {
  using namespace autograd_test;
  Tensor x = leaf({5, 2}, 3);
  std::vector<Tensor> p = ops::split(x, 2);
  Tensor out = ops::sum(ops::mul(p[1], p[1]));
  std::vector<std::string> ops_run = backward_ops(out);
  EXPECT_THAT(ops_run, ElementsAre("aten::ones_like", "aten::expand", "aten::mul.Tensor", "aten::mul.Tensor",
                                   "aten::add_.Tensor", "aten::zeros", "aten::zeros", "aten::cat"));
  const std::vector<double> g = x.grad().to_vector<double>();
  const std::vector<double> v = x.to_vector<double>();
  for (size_t i = 0; i < 10; ++i) EXPECT_DOUBLE_EQ(g[i], (i >= 4 && i < 8) ? 2 * v[i] : 0.0) << i;
  EXPECT_EQ(p[0].grad_fn()->name(), "SplitBackward0");
}

TEST(SplitTest, GradientsMatchCentralDifferences) {
  using namespace autograd_test;
  const Tensor probe = random({3, 4}, 9);
  auto check = [&](const std::function<Tensor(const std::vector<Tensor>&)>& f, const char* name) {
    SCOPED_TRACE(name);
    Tensor x = leaf({3, 4}, 5);
    Tensor out = f({x});
    ops::sum(ops::mul(out, probe)).backward();
    const std::vector<double> want = numeric_grad(f, {x}, 0, probe);
    const std::vector<double> got = x.grad().to_vector<double>();
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
  };
  // Each piece used with a different weight, one piece twice and one not at all.
  check([](const std::vector<Tensor>& in) {
    std::vector<Tensor> p = ops::split(in[0], 3, 1);
    return ops::cat({ops::mul(p[0], p[0]), ops::exp(p[1])}, 1);
  }, "split");
  check([](const std::vector<Tensor>& in) {
    std::vector<Tensor> p = ops::split_with_sizes(in[0], {1, 2}, 0);
    return ops::cat({ops::sin(p[1]), ops::mul(p[0], p[0])}, 0);
  }, "split_with_sizes");
  check([](const std::vector<Tensor>& in) {
    std::vector<Tensor> r = ops::unbind(in[0], 1);
    return ops::stack({ops::mul(r[0], r[3]), r[1], ops::exp(r[1]), r[0]}, 1);
  }, "unbind");
  check([](const std::vector<Tensor>& in) {
    std::vector<Tensor> c = ops::chunk(in[0], 2, 1);
    return ops::cat({ops::tanh(c[1]), c[1]}, 1);
  }, "chunk");
}

TEST(SplitTest, InPlaceOnAPieceIsRefusedAsPyTorchDoes) {
  using namespace autograd_test;
  Tensor x = leaf({4, 2}, 2);
  Tensor y = ops::mul(x, x);
  std::vector<Tensor> p = ops::split(y, 2);
  EXPECT_THAT([&] { ops::mul_(p[1], p[0]); },
              ThrowsMessage<Error>(HasSubstr(
                  "Output 1 of SplitBackward0 is a view and is being modified inplace. This view is the output of a "
                  "function that returns multiple views. Such functions do not allow the output views to be "
                  "modified inplace. You should replace the inplace operation by an out-of-place one.")));
  // Without grad, pieces are plain views: writing through one changes the base.
  Tensor z = ops::zeros({4});
  std::vector<Tensor> q = ops::unbind(z);
  ops::add_(q[2], ops::ones({}));
  EXPECT_THAT(z.to_vector<float>(), ElementsAre(0, 0, 1, 0));
}

TEST(SplitTest, UnbindBackwardStacksWithExpandedZeros) {
  using namespace autograd_test;
  Tensor x = leaf({3, 2}, 7);
  std::vector<Tensor> r = ops::unbind(x);
  Tensor out = ops::sum(r[1]);
  std::vector<std::string> ops_run = backward_ops(out);
  EXPECT_THAT(ops_run, ElementsAre("aten::ones_like", "aten::expand", "aten::zeros", "aten::expand",
                                   "aten::zeros", "aten::expand", "aten::stack"));
  EXPECT_THAT(x.grad().to_vector<double>(), ElementsAre(0, 0, 1, 1, 0, 0));
  EXPECT_EQ(r[0].grad_fn()->name(), "UnbindBackward0");
}

}  // namespace
}  // namespace opspec
