// copy_slices_test.cc: in-place changes to views under autograd (See Note
// [In-place changes to views]): gradients, grad_fn names and backward op
// sequences as PyTorch's (recorded with PyTorch 1.13's TorchDispatchMode,
// whose CopySlices is 2.x's), its refusals, and central differences.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "runtime/autograd/autograd_test_util.h"
#include "runtime/autograd/formulas.h"
#include "runtime/dispatch/library.h"

namespace opspec {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

Tensor leaf_of(std::vector<double> v, std::vector<int64_t> shape) {
  Tensor t = ops::tensor(std::move(v), shape, DType::kFloat32);
  t.requires_grad_();
  return t;
}

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

TEST(CopySlicesTest, InPlaceOnAViewGivesItsBaseACopySlicesNode) {
  const Tensor a = leaf_of({1, 2, 3, 4}, {4});
  const Tensor b = ops::mul(a, 1);
  Tensor v = ops::slice(b, 0, 1, 3);
  ops::mul_(v, ops::tensor({5.0, 7.0}, {2}, DType::kFloat32));
  EXPECT_EQ(b.grad_fn()->name(), "CopySlices");
  EXPECT_EQ(v.grad_fn()->name(), "AsStridedBackward0");
  // PyTorch: new_empty_strided, copy_, as_strided, clone(contiguous), the
  // in-place op's backward on the region, copy_ back, then b's history.
  EXPECT_THAT(autograd_test::backward_ops(ops::sum(b)),
              ElementsAre("aten::ones_like", "aten::expand", "aten::new_empty_strided", "aten::copy_",
                          "aten::as_strided", "aten::clone", "aten::mul.Tensor", "aten::copy_", "aten::mul.Tensor"));
  EXPECT_THAT(values(a.grad()), ElementsAre(1, 5, 7, 1));
}

TEST(CopySlicesTest, AViewReadAfterItsBaseChangedFollowsTheNewHistory) {
  // Before, y kept the history of b's old value: a silent gradient of 1, not 2.
  const Tensor a = leaf_of({1, 2, 3, 4}, {4});
  Tensor b = ops::mul(a, 1);
  const Tensor y = ops::slice(b, 0, 0, 2);
  ops::div_(b, 0.5);
  EXPECT_EQ(y.grad_fn()->name(), "AsStridedBackward0");
  ops::sum(y).backward();
  EXPECT_THAT(values(a.grad()), ElementsAre(2, 2, 0, 0));
}

// Reads are const, and reading a stale view's grad_fn regenerates it: threads
// reading one view at once each made (and stored) their own node, racing on
// the view's history (See Note [View history lock]).
TEST(CopySlicesTest, ThreadsReadingAStaleViewAtOnceSeeOneRegeneratedNode) {
  for (int round = 0; round < 20; ++round) {
    const Tensor a = leaf_of({1, 2, 3, 4}, {4});
    Tensor b = ops::mul(a, 1);
    const Tensor y = ops::slice(b, 0, 0, 2);
    ops::div_(b, 0.5);
    std::vector<std::shared_ptr<autograd::Node>> seen(4);
    bool needs_grad[4] = {};
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
      threads.emplace_back([&, i] {
        needs_grad[i] = y.requires_grad();
        seen[i] = y.grad_fn();
      });
    }
    for (auto& t : threads) t.join();
    for (int i = 0; i < 4; ++i) {
      EXPECT_TRUE(needs_grad[i]);
      EXPECT_EQ(seen[i], y.grad_fn()) << "thread " << i << " saw a node of its own";
    }
    EXPECT_EQ(y.grad_fn()->name(), "AsStridedBackward0");
  }
}

TEST(CopySlicesTest, CopyIntoASliceSendsTheRestOfTheGradientToTheBase) {
  const Tensor a = leaf_of({0, 0, 0, 0, 0, 0}, {2, 3});
  const Tensor x = leaf_of({1, 2, 3, 4}, {2, 2});
  const Tensor b = ops::add(a, 0);
  Tensor region = ops::slice(b, 1, 1, 3);
  ops::copy_(region, ops::mul(x, 3));
  ops::sum(ops::mul(b, ops::view(ops::arange(0.0, 6.0), {2, 3}))).backward();
  EXPECT_THAT(values(a.grad()), ElementsAre(0, 0, 0, 3, 0, 0));
  EXPECT_THAT(values(x.grad()), ElementsAre(3, 6, 12, 15));
  EXPECT_THAT(values(b), ElementsAre(0, 3, 6, 0, 9, 12));
}

TEST(CopySlicesTest, InPlaceOnAViewOfAViewReachesTheRootBase) {
  const Tensor a = leaf_of({0, 1, 2, 3, 4, 5}, {6});
  const Tensor b = ops::view(ops::sub(a, 2.5), {2, 3});
  Tensor row = ops::select(ops::t(b), 0, 1);  // b[:, 1]
  ops::relu_(row);
  ops::sum(ops::mul(b, b)).backward();
  // PyTorch 1.13: tensor([-5., 0., -1., 1., 3., 5.]).
  EXPECT_THAT(values(a.grad()), ElementsAre(-5, 0, -1, 1, 3, 5));
}

TEST(CopySlicesTest, TwoOverlappingViewsChangedInTurnAsPyTorch) {
  // r (row 2) and c (column 1) share b[2, 1]; c.add_(r) reads r after r.mul_(w).
  Tensor x = ops::div(ops::view(ops::arange(0.0, 16.0), {4, 4}), 7);
  x.requires_grad_();
  const Tensor w = leaf_of({1, -2, 3, 0.5}, {4});
  const Tensor b = ops::add(x, 1);
  Tensor r = ops::select(b, 0, 2), c = ops::select(ops::t(b), 0, 1);
  ops::mul_(r, w);
  ops::add_(c, r);
  const Tensor loss = ops::sum(ops::mul(b, b));
  loss.backward();
  // PyTorch 1.13 on the same program.
  EXPECT_NEAR(loss.item<double>(), 143.6734619140625, 1e-4);
  const std::vector<double> want_x = {2.0, 6.571428298950195, 2.5714285373687744, 2.857142925262451,
                                      3.142857074737549, -5.714284896850586, 3.7142858505249023, 4.0,
                                      10.857142448425293, 0.5714263916015625, 60.0, 5.4285712242126465,
                                      5.428571701049805, 8.285714149475098, 6.0, 6.285714149475098};
  const std::vector<double> want_w = {23.265304565429688, -0.6530587077140808, 48.57143020629883, 27.918365478515625};
  const std::vector<double> gx = values(x.grad()), gw = values(w.grad());
  for (size_t i = 0; i < want_x.size(); ++i) EXPECT_NEAR(gx[i], want_x[i], 1e-4) << i;
  for (size_t i = 0; i < want_w.size(); ++i) EXPECT_NEAR(gw[i], want_w[i], 1e-4) << i;
}

TEST(CopySlicesTest, WritingIntoASliceOfAPlainBufferTracksIt) {
  // The slice was made by a kernel, not recorded (buf needs no grad), and
  // copy_ adopts it; before, buf stayed without history and x got no gradient.
  const Tensor x = leaf_of({1, 2, 3, 4}, {2, 2});
  Tensor buf = ops::zeros({2, 3});
  Tensor region = ops::slice(buf, 1, 1, 3);
  ops::copy_(region, ops::mul(x, 3));
  ASSERT_NE(buf.grad_fn(), nullptr);
  EXPECT_EQ(buf.grad_fn()->name(), "CopySlices");
  const Tensor loss = ops::sum(ops::mul(buf, ops::view(ops::arange(0.0, 6.0), {2, 3})));
  // PyTorch: the self gradient of copy_ is not computed (the slice needed none), nor written back.
  EXPECT_THAT(autograd_test::backward_ops(loss),
              ElementsAre("aten::ones_like", "aten::expand", "aten::mul.Tensor", "aten::new_empty_strided",
                          "aten::copy_", "aten::as_strided", "aten::clone", "aten::mul.Tensor"));
  EXPECT_THAT(values(x.grad()), ElementsAre(3, 6, 12, 15));
  // Two writes into one buffer reach both sources.
  const Tensor p = leaf_of({1, 2}, {2}), q = leaf_of({5}, {1});
  Tensor out = ops::zeros({3});
  Tensor head = ops::slice(out, 0, 0, 2), tail = ops::slice(out, 0, 2, 3);
  ops::copy_(head, ops::exp(p));
  ops::copy_(tail, ops::mul(q, q));
  ops::sum(ops::mul(out, ops::tensor({1.0, 2.0, 3.0}, {3}, DType::kFloat32))).backward();
  EXPECT_NEAR(values(p.grad())[0], 2.718281828, 1e-5);
  EXPECT_NEAR(values(p.grad())[1], 14.7781122, 1e-4);
  EXPECT_THAT(values(q.grad()), ElementsAre(30));
  // A detached alias is not a view of its source: writing into it leaves the source's history alone.
  const Tensor b = ops::mul(leaf_of({1, 1, 1}, {3}), 2);
  Tensor d = ops::detach(b);
  Tensor first = ops::slice(d, 0, 0, 1);
  ops::copy_(first, leaf_of({7}, {1}));
  EXPECT_EQ(d.grad_fn()->name(), "CopySlices");
  EXPECT_EQ(b.grad_fn()->name(), "MulBackward0");
}

TEST(CopySlicesTest, AViewTakenBeforeItsBaseGainedHistoryFollowsIt) {
  // PyTorch 1.13: `b = zeros(3); v = b[:2]; b.copy_(x * 1); (v.sum() + x.sum()).backward()`
  // gives x.grad [2, 2, 1]; before, v stayed out of the graph (no Autograd
  // key) and x got [1, 1, 1], silently.
  const Tensor x = leaf_of({1, 1, 1}, {3});
  Tensor b = ops::zeros({3});
  const Tensor v = ops::slice(b, 0, 0, 2);
  EXPECT_FALSE(v.requires_grad());
  ops::copy_(b, ops::mul(x, 1));
  EXPECT_TRUE(v.requires_grad());
  EXPECT_FALSE(v.is_leaf());
  EXPECT_EQ(v.impl()->autograd_meta(), nullptr);  // reading them regenerates nothing
  ASSERT_NE(v.grad_fn(), nullptr);
  EXPECT_EQ(v.grad_fn()->name(), "AsStridedBackward0");
  EXPECT_FALSE(v.is_leaf());
  ops::add(ops::sum(v), ops::sum(x)).backward();
  EXPECT_THAT(values(x.grad()), ElementsAre(2, 2, 1));
  // Read first by an op (no accessor called before): the same.
  const Tensor y = leaf_of({1, 2, 3}, {3});
  Tensor c = ops::zeros({3});
  const Tensor w = ops::slice(ops::slice(c, 0, 1, 3), 0, 0, 1);  // a view of a view: the root is c
  ops::mul_(c, ops::zeros({3}));  // a change without history: w stays out
  EXPECT_FALSE(ops::mul(w, 2).requires_grad());
  ops::add_(c, ops::mul(y, y));
  const Tensor loss = ops::add(ops::sum(ops::mul(w, 10)), ops::sum(y));
  ASSERT_TRUE(loss.requires_grad());
  loss.backward();
  EXPECT_THAT(values(y.grad()), ElementsAre(1, 41, 1));
}

TEST(CopySlicesTest, AViewOfAnUnchangedBaseThatRequiresGradStaysOut) {
  // PyTorch says such a view requires grad but sends its gradient nowhere
  // (grad None); here it stays out of the graph, so backward says so.
  Tensor leaf = ops::zeros({3});
  const Tensor u = ops::slice(leaf, 0, 0, 2);
  leaf.requires_grad_();
  EXPECT_FALSE(u.requires_grad());
  EXPECT_FALSE(ops::mul(u, 1).requires_grad());
  // Changed under no_grad since: PyTorch regenerates the view's grad_fn, and so does opspec.
  {
    autograd::NoGradGuard no_grad;
    ops::add_(leaf, ops::ones({3}));
  }
  ASSERT_TRUE(u.requires_grad());
  EXPECT_EQ(u.grad_fn()->name(), "AsStridedBackward0");
  ops::sum(ops::mul(u, 4)).backward();
  EXPECT_THAT(values(leaf.grad()), ElementsAre(4, 4, 0));
}

// The PyTorch 2.x message (handle_view_on_rebase) for a view taken under no_grad, after its first sentence.
constexpr const char* kNoGradViewAdvice =
    " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving "
    "both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be "
    "tracked) or both outside (if you want the inplace to be tracked).";

TEST(CopySlicesTest, AViewTakenUnderNoGradRequiresGradAndSendsItsGradientNowhere) {
  // PyTorch 2.x: such a view is a leaf that requires grad (its base does),
  // ops on it record history, and backward reaches nothing through it.
  const Tensor x = leaf_of({1, 2, 3}, {3});
  const Tensor b = ops::mul(x, 2);
  Tensor w;
  {
    autograd::NoGradGuard no_grad;
    w = ops::slice(b, 0, 0, 2);
    EXPECT_TRUE(w.requires_grad());
  }
  EXPECT_TRUE(w.requires_grad());
  EXPECT_TRUE(w.is_leaf());
  EXPECT_EQ(w.grad_fn(), nullptr);
  const Tensor out = ops::mul(w, 3);
  ASSERT_TRUE(out.requires_grad());
  EXPECT_EQ(out.grad_fn()->name(), "MulBackward0");
  ops::add(ops::sum(out), ops::sum(ops::select(x, 0, 2))).backward();
  EXPECT_THAT(values(x.grad()), ElementsAre(0, 0, 1));  // none through w
  EXPECT_THAT([&] { autograd::backward({w}, {ops::ones({2})}); },
              ThrowsMessage<Error>(HasSubstr("does not require grad and does not have a grad_fn")));
}

TEST(CopySlicesTest, InPlaceOnAViewTakenUnderNoGradIsRefusedInPyTorchsWords) {
  // The tester's reproduction: PyTorch 2.x refuses it; opspec accepted it and
  // recorded the change.
  const Tensor x = leaf_of({1, 2, 3, 4}, {4}), w = leaf_of({5, 7}, {2});
  const Tensor y = ops::mul(x, 2.0);
  Tensor v;
  {
    autograd::NoGradGuard no_grad;
    v = ops::slice(y, 0, 0, 2);
  }
  EXPECT_THAT([&] { ops::mul_(v, w); },
              ThrowsMessage<Error>(HasSubstr(std::string("A view was created in no_grad mode and is being modified "
                                                         "inplace with grad mode enabled.") +
                                             kNoGradViewAdvice)));
  // Even with no input that requires grad besides the view itself (it requires grad with its base).
  EXPECT_THAT([&] { ops::mul_(v, ops::ones({2})); },
              ThrowsMessage<Error>(HasSubstr("A view was created in no_grad mode and is being modified")));
  // Of a leaf: this message comes first (PyTorch checks the view's CreationMeta before its base).
  Tensor u;
  {
    autograd::NoGradGuard no_grad;
    u = ops::slice(x, 0, 0, 2);
  }
  EXPECT_THAT([&] { ops::mul_(u, w); },
              ThrowsMessage<Error>(HasSubstr("A view was created in no_grad mode and is being modified inplace")));
  // A view of it taken with grad mode on has history and keeps the mark.
  Tensor vv = ops::slice(v, 0, 0, 1);
  ASSERT_NE(vv.grad_fn(), nullptr);
  EXPECT_THAT([&] { ops::mul_(vv, ops::ones({1})); },
              ThrowsMessage<Error>(HasSubstr("Output 0 of SliceBackward0 is a view of a view which was created in "
                                             "no_grad mode and is being modified inplace with grad mode enabled.")));
  // Both inside no_grad: allowed, and not tracked.
  {
    autograd::NoGradGuard no_grad;
    ops::mul_(v, w);
  }
  EXPECT_THAT(values(y), ElementsAre(10, 28, 6, 8));
  EXPECT_EQ(y.grad_fn()->name(), "MulBackward0");
}

TEST(CopySlicesTest, AViewTakenUnderNoGradIsRefusedOnceItsBaseChanged) {
  // PyTorch regenerates a view's grad_fn when read after its base changed in
  // place; for a no_grad view that is refused (indirect=true).
  const Tensor x = leaf_of({1, 2, 3}, {3});
  Tensor y = ops::mul(x, 2.0);
  Tensor v;
  {
    autograd::NoGradGuard no_grad;
    v = ops::slice(y, 0, 0, 2);
  }
  ops::mul_(y, ops::full({}, 2.0));
  EXPECT_THAT([&] { ops::sum(v); },
              ThrowsMessage<Error>(HasSubstr(std::string("A view was created in no_grad mode and its base or "
                                                         "another view of its base has been modified inplace with "
                                                         "grad mode enabled.") +
                                             kNoGradViewAdvice)));
  EXPECT_THAT([&] { v.grad_fn(); }, ThrowsMessage<Error>(HasSubstr("A view was created in no_grad mode")));
  autograd::NoGradGuard no_grad;  // reading it without grad mode asks for no history
  EXPECT_THAT(values(ops::sum(v)), ElementsAre(12));
}

// The PyTorch 2.x advice after the first sentence for a view that one of several views of a Tensor[] view op is.
constexpr const char* kMultiOutputAdvice =
    " This view is the output of a function that returns multiple views. Such functions do not allow the output "
    "views to be modified inplace. You should replace the inplace operation by an out-of-place one.";

TEST(CopySlicesTest, AViewOfAPlainTensorTakenUnderNoGradIsRefusedToo) {
  // PyTorch marks every view made under no_grad (its ADInplaceOrView kernel),
  // whatever its base: `x = zeros(3); with no_grad: v = x[:2]; v.mul_(w)` fails
  // (torch 1.13 checked); opspec wrote w into x and recorded it.
  const Tensor w = leaf_of({5, 7}, {2});
  const Tensor x = ops::tensor({1.0, 2.0, 3.0}, {3}, DType::kFloat32);
  Tensor v;
  {
    autograd::NoGradGuard no_grad;
    v = ops::slice(x, 0, 0, 2);
  }
  EXPECT_EQ(v.impl()->view_creation(), CreationMeta::kNoGradMode);
  EXPECT_THAT([&] { ops::mul_(v, w); },
              ThrowsMessage<Error>(HasSubstr(std::string("A view was created in no_grad mode and is being modified "
                                                         "inplace with grad mode enabled.") +
                                             kNoGradViewAdvice)));
  EXPECT_THAT(values(x), ElementsAre(1, 2, 3));
  // A view of it keeps the mark, whatever the grad mode it was taken in; so does copy_ into it.
  Tensor vv = ops::slice(v, 0, 1, 2);
  EXPECT_EQ(vv.impl()->view_creation(), CreationMeta::kNoGradMode);
  EXPECT_THAT([&] { ops::copy_(vv, ops::select(w, 0, 0)); },
              ThrowsMessage<Error>(HasSubstr("A view was created in no_grad mode and is being modified inplace")));
  // Nothing that requires grad, or grad mode off, or enable_grad() around the view: allowed.
  ops::mul_(v, ops::full({}, 2.0));
  {
    autograd::NoGradGuard no_grad;
    ops::mul_(v, w);
  }
  EXPECT_THAT(values(x), ElementsAre(10, 28, 3));
  EXPECT_FALSE(x.requires_grad());
  Tensor u;
  {
    autograd::NoGradGuard no_grad;
    autograd::EnableGradGuard enable_grad;
    u = ops::slice(x, 0, 1, 3);
  }
  EXPECT_EQ(u.impl()->view_creation(), CreationMeta::kDefault);
  ops::mul_(u, w);
  EXPECT_EQ(x.grad_fn()->name(), "CopySlices");
  ops::sum(x).backward();
  EXPECT_THAT(values(w.grad()), ElementsAre(28, 3));
  // An integer view is no view for autograd: writing into it is allowed (torch 1.13).
  const Tensor n = ops::tensor({1.0, 2.0, 3.0}, {3}, DType::kInt64);
  Tensor nv;
  {
    autograd::NoGradGuard no_grad;
    nv = ops::slice(n, 0, 0, 2);
  }
  ops::copy_(nv, w);
  EXPECT_THAT(values(n), ElementsAre(5, 7, 3));
}

TEST(CopySlicesTest, AViewOfAPlainTensorTakenUnderNoGradIsRefusedOnceItsBaseGainedHistory) {
  // `x = zeros(3); with no_grad: v = x[:2]; x.mul_(w); v.sum()` fails in PyTorch (indirect).
  const Tensor w = leaf_of({2, 2, 2}, {3});
  Tensor x = ops::tensor({1.0, 2.0, 3.0}, {3}, DType::kFloat32);
  Tensor v;
  {
    autograd::NoGradGuard no_grad;
    v = ops::slice(x, 0, 0, 2);
  }
  ops::mul_(x, w);
  EXPECT_THAT([&] { ops::sum(v); },
              ThrowsMessage<Error>(HasSubstr(std::string("A view was created in no_grad mode and its base or "
                                                         "another view of its base has been modified inplace with "
                                                         "grad mode enabled.") +
                                             kNoGradViewAdvice)));
  // Written in place directly, the message is the direct one, as PyTorch's check_inplace gives it first.
  EXPECT_THAT([&] { ops::mul_(v, ops::full({}, 2.0)); },
              ThrowsMessage<Error>(HasSubstr("A view was created in no_grad mode and is being modified inplace")));
  autograd::NoGradGuard no_grad;
  EXPECT_THAT(values(ops::sum(v)), ElementsAre(6));
}

TEST(CopySlicesTest, ViewsOfAPlainTensorFromSplitRefuseInPlaceChanges) {
  // split, unbind and chunk mark their views as PyTorch's do (MULTI_OUTPUT_NODE);
  // without a grad_fn PyTorch's message starts as a no_grad view's does.
  const Tensor w = leaf_of({5, 7}, {2});
  const std::string message =
      std::string("A view was created in no_grad mode and is being modified inplace with grad mode enabled.") +
      kMultiOutputAdvice;
  const Tensor x = ops::tensor({1.0, 2.0, 3.0, 4.0}, {4}, DType::kFloat32);
  std::vector<Tensor> parts = ops::split(x, 2);
  EXPECT_EQ(parts[0].impl()->view_creation(), CreationMeta::kMultiOutputNode);
  EXPECT_THAT([&] { ops::mul_(parts[0], w); }, ThrowsMessage<Error>(HasSubstr(message)));
  EXPECT_THAT([&] { ops::mul_(ops::unbind(ops::view(x, {2, 2}), 0)[1], w); },
              ThrowsMessage<Error>(HasSubstr(message)));
  EXPECT_THAT([&] { ops::mul_(ops::chunk(x, 2)[1], w); }, ThrowsMessage<Error>(HasSubstr(message)));
  // A view of one keeps the mark.
  Tensor part_view = ops::slice(parts[1], 0, 0, 1);
  EXPECT_THAT([&] { ops::mul_(part_view, ops::select(w, 0, 0)); },
              ThrowsMessage<Error>(HasSubstr(message)));
  // Nothing that requires grad: allowed.
  ops::mul_(parts[1], ops::full({}, 2.0));
  EXPECT_THAT(values(x), ElementsAre(1, 2, 6, 8));
  // Under no_grad the mark is kNoGradMode (PyTorch's ADInplaceOrView kernel's choice), and the message its.
  std::vector<Tensor> quiet;
  {
    autograd::NoGradGuard no_grad;
    quiet = ops::split(x, 2);
  }
  EXPECT_EQ(quiet[0].impl()->view_creation(), CreationMeta::kNoGradMode);
  EXPECT_THAT([&] { ops::mul_(quiet[0], w); },
              ThrowsMessage<Error>(HasSubstr(std::string("A view was created in no_grad mode and is being modified "
                                                         "inplace with grad mode enabled.") +
                                             kNoGradViewAdvice)));
  // Its base changed with history: reading one is refused (indirect).
  Tensor y = ops::tensor({1.0, 2.0, 3.0, 4.0}, {4}, DType::kFloat32);
  std::vector<Tensor> halves = ops::split(y, 2);
  ops::mul_(y, leaf_of({1, 1, 1, 1}, {4}));
  EXPECT_THAT([&] { ops::sum(halves[0]); },
              ThrowsMessage<Error>(HasSubstr(std::string("A view was created in no_grad mode and its base or another "
                                                         "view of its base has been modified inplace with grad mode "
                                                         "enabled.") +
                                             kMultiOutputAdvice)));
}

TEST(CopySlicesTest, NoGradientForTheOldViewCountsAsZeros) {
  // A user's in-place op whose formula gives self no gradient (undefined):
  // the view's region of the base gets zeros, the rest its gradient
  // (PyTorch's loop would leave the base without any).
  static const bool registered = [] {
    Library lib("copy_slices_test");
    lib.def("overwrite_(Tensor(a!) self, Tensor src) -> Tensor(a!)")
        .impl("overwrite_", DispatchKey::kCPU, [](const Tensor& self, const Tensor& src) {
          Tensor s = self;
          ops::copy_(s, src);
          return self;
        });
    autograd::register_formula({.op = "copy_slices_test::overwrite_", .node_name = "OverwriteBackward0",
                                .backward = [](const autograd::FormulaCall& c) -> autograd::VariableList {
                                  return {Tensor(), c.grad()};
                                }});
    return true;
  }();
  ASSERT_TRUE(registered);
  const Tensor a = leaf_of({1, 2, 3, 4}, {4});
  const Tensor x = leaf_of({8, 9}, {2});
  const Tensor b = ops::mul(a, 1);
  Stack s{ops::slice(b, 0, 1, 3), x};
  Dispatcher::singleton().call_boxed(Dispatcher::singleton().get("copy_slices_test::overwrite_"), s);
  ops::sum(ops::mul(b, ops::tensor({1.0, 2.0, 3.0, 4.0}, {4}, DType::kFloat32))).backward();
  EXPECT_THAT(values(a.grad()), ElementsAre(1, 0, 0, 4));
  EXPECT_THAT(values(x.grad()), ElementsAre(2, 3));
  EXPECT_THAT(values(b), ElementsAre(1, 8, 9, 4));
}

TEST(CopySlicesTest, RefusalsInPyTorchsWords) {
  const Tensor a = leaf_of({1, 1, 1}, {3});
  Tensor first = ops::select(a, 0, 0);
  EXPECT_THAT([&] { ops::add_(first, ops::ones({})); },
              ThrowsMessage<Error>(HasSubstr("a view of a leaf Variable that requires grad is being used in an "
                                             "in-place operation.")));
  Tensor b = ops::mul(leaf_of({1, 1, 1, 1}, {4}), 1);
  const std::vector<Tensor> parts = ops::split(b, 2);
  ops::div_(b, 0.5);
  EXPECT_THAT([&] { ops::sum(parts[0]); },
              ThrowsMessage<Error>(HasSubstr("Output 0 of SplitBackward0 is a view and its base or another view of "
                                             "its base has been modified inplace.")));
  // An in-place view op is refused where any in-place op is (PyTorch 1.13's words).
  const std::vector<Tensor> rows = ops::split(ops::mul(leaf_of({1, 2}, {2, 1}), 1), 1);
  Tensor row = rows[0];
  EXPECT_THAT([&] { ops::squeeze_(row, 0); },
              ThrowsMessage<Error>(HasSubstr("Output 0 of SplitBackward0 is a view and is being modified inplace.")));
  Tensor leaf_view = ops::view(leaf_of({1, 2}, {2}), {1, 2});
  EXPECT_THAT([&] { ops::squeeze_(leaf_view, 0); },
              ThrowsMessage<Error>(HasSubstr("a view of a leaf Variable that requires grad is being used in an "
                                             "in-place operation.")));
}

TEST(CopySlicesTest, AnInPlaceViewOpKeepsAViewAView) {
  // PyTorch 1.13: `b = a * 1; v = b[:, :]; v.squeeze_(1)` gives v the grad_fn
  // SqueezeBackward (2.x numbers it 4) after its slices, b keeps MulBackward0,
  // and backward runs unsqueeze, then the slices' backward.
  const Tensor a = leaf_of({1, 2, 3}, {3, 1});
  const Tensor b = ops::mul(a, 1);
  Tensor v = ops::slice(ops::slice(b, 0, 0, 3), 1, 0, 1);
  ops::squeeze_(v, 1);
  EXPECT_EQ(v.grad_fn()->name(), "SqueezeBackward4");
  EXPECT_EQ(b.grad_fn()->name(), "MulBackward0");
  EXPECT_THAT(autograd_test::backward_ops(ops::sum(v)),
              ElementsAre("aten::ones_like", "aten::expand", "aten::unsqueeze", "aten::slice_backward",
                          "aten::slice_backward", "aten::mul.Tensor"));
  EXPECT_THAT(values(a.grad()), ElementsAre(1, 1, 1));
  // Its base changed afterwards: the view regenerates with its new geometry
  // (PyTorch: AsStridedBackward0, shape [3]; a's gradient [0, 2, 4]).
  const Tensor a2 = leaf_of({1, 2, 3}, {3, 1});
  Tensor b2 = ops::mul(a2, 1);
  Tensor v2 = ops::slice(b2, 0, 0, 3);
  ops::squeeze_(v2, 1);
  ops::mul_(b2, ops::full({}, 2.0));
  EXPECT_EQ(v2.grad_fn()->name(), "AsStridedBackward0");
  ASSERT_THAT(v2.sizes(), ElementsAre(3));
  ops::sum(ops::mul(v2, ops::arange(0.0, 3.0))).backward();
  EXPECT_THAT(values(a2.grad()), ElementsAre(0, 2, 4));
}

TEST(CopySlicesTest, GradientsMatchCentralDifferences) {
  autograd_test::expect_grads_match_central_differences({
      {"mul_ of a slice by another input", {{4, 3}, {2, 3}},
       [](const auto& x) {
         Tensor b = ops::mul(x[0], 1.5);
         Tensor s = ops::slice(b, 0, 1, 3);
         ops::mul_(s, x[1]);
         return ops::exp(b);
       },
       "ExpBackward0"},
      {"a transposed row's mul_ read through another view", {{3, 4}},
       [](const auto& x) {
         Tensor b = ops::add(x[0], 0.25);
         Tensor row = ops::select(ops::t(b), 0, 2);
         ops::mul_(row, ops::select(ops::t(x[0]), 0, 1));
         return ops::mul(ops::view(b, {12}), ops::view(b, {12}));
       },
       "MulBackward0"},
      {"copy_ into a strided slice, then the view used", {{2, 6}, {2, 3}},
       [](const auto& x) {
         Tensor b = ops::mul(x[0], 2.0);
         Tensor odd = ops::slice(b, 1, 1, 6, 2);
         ops::copy_(odd, ops::sin(x[1]));
         return ops::mul(odd, ops::sum(b));
       },
       "MulBackward0"},
  });
}

}  // namespace
}  // namespace opspec
