// One test per class of bad input the issue names: each must raise
// opspec::Error naming the op, the argument and expected vs actual; never crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/dispatch/dispatcher.h"
#include "runtime/dispatch/mode.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace bad_input_test {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

TEST(BadInputTest, ShapeMismatch) {
  EXPECT_THAT([] { ops::mm(ops::ones({2, 4}), ops::ones({5, 3})); },
              ThrowsMessage<Error>(HasSubstr("aten::mm: mat1 and mat2 shapes cannot be multiplied (2x4 and 5x3)")));
  EXPECT_THAT([] { ops::add(ops::ones({2, 3}), ops::ones({4})); },
              ThrowsMessage<Error>(AllOf(HasSubstr("aten::add"), HasSubstr("size of tensor a (3)"),
                                         HasSubstr("size of tensor b (4)"))));
  EXPECT_THAT([] { ops::view(ops::ones({2, 3}), {4}); },
              ThrowsMessage<Error>(HasSubstr("shape '[4]' is invalid for input of size 6")));
  EXPECT_THAT([] { ops::cat(std::vector<Tensor>{ops::ones({2, 3}), ops::ones({2, 4})}, 0); },
              ThrowsMessage<Error>(HasSubstr("Sizes of tensors must match except in dimension 0")));
}

// A dtype a kernel refuses is named by the kernel of the device that refused,
// as PyTorch's dispatch macros do ("abs_cpu", "arange_cuda"), never the CPU's
// name for a meta tensor.
TEST(BadInputTest, RefusedDtypesNameTheDevicesKernel) {
  const Tensor b = ops::ones({2}, {.dtype = DType::kBool});
  EXPECT_THAT([&] { ops::abs(b); }, ThrowsMessage<Error>(HasSubstr("\"abs_cpu\" not implemented for 'Bool'")));
  const Tensor m = ops::empty({2}, {.dtype = DType::kBool, .device = kMeta});
  EXPECT_THAT([&] { ops::abs(m); }, ThrowsMessage<Error>(HasSubstr("\"abs_meta\" not implemented for 'Bool'")));
  EXPECT_THAT([] { ops::arange(4, {.dtype = DType::kBool}); },
              ThrowsMessage<Error>(HasSubstr("\"arange_cpu\" not implemented for 'Bool'")));
  EXPECT_THAT([] { ops::arange(4, {.dtype = DType::kBool, .device = kMeta}); },
              ThrowsMessage<Error>(HasSubstr("\"arange_meta\" not implemented for 'Bool'")));
  EXPECT_THAT([] { ops::randn({2}, {.dtype = DType::kInt64, .device = kMeta}); },
              ThrowsMessage<Error>(HasSubstr("\"normal_kernel_meta\" not implemented for 'Long'")));
}

TEST(BadInputTest, WrongDtype) {
  EXPECT_THAT([] { ops::mm(ops::ones({2, 2}), ops::ones({2, 2}, {.dtype = DType::kFloat64})); },
              ThrowsMessage<Error>(HasSubstr("aten::mm")));
  EXPECT_THAT([] { ops::where(ops::ones({2}), ops::ones({2}), ops::zeros({2})); },
              ThrowsMessage<Error>(HasSubstr("where expected condition to be a boolean tensor")));
  EXPECT_THAT([] { ops::randn({2}, {.dtype = DType::kInt64}); }, ThrowsMessage<Error>(HasSubstr("Long")));
  EXPECT_THAT([] { ops::mean(ops::ones({2}, {.dtype = DType::kInt64})); },
              ThrowsMessage<Error>(HasSubstr("mean(): could not infer output dtype")));
  Tensor ints = ops::ones({2}, {.dtype = DType::kInt64});
  EXPECT_THAT([&] { ops::add_(ints, ops::ones({2})); },
              ThrowsMessage<Error>(HasSubstr("result type Float can't be cast to the desired output type Long")));
}

TEST(BadInputTest, MixedDevices) {
  EXPECT_THAT([] { ops::add(ops::ones({2}), ops::ones({2}, {.device = kMeta})); },
              ThrowsMessage<Error>(HasSubstr("Expected all tensors to be on the same device, but found at least two devices")));
  EXPECT_THAT([] { ops::mm(ops::ones({2, 2}, {.device = kMeta}), ops::ones({2, 2})); },
              ThrowsMessage<Error>(HasSubstr("same device")));
  // A 0-dim cpu tensor may join another device, as in PyTorch.
  EXPECT_NO_THROW(ops::add(ops::ones({2}, {.device = kMeta}), ops::scalar_tensor(1.0)));
}

TEST(BadInputTest, OutOfRangeDims) {
  EXPECT_THAT([] { ops::sum(ops::ones({2, 3}), {2}); },
              ThrowsMessage<Error>(HasSubstr("Dimension out of range (expected to be in range of [-2, 1], but got 2)")));
  EXPECT_THAT([] { ops::transpose(ops::ones({2, 3}), 0, -3); }, ThrowsMessage<Error>(HasSubstr("Dimension out of range")));
  EXPECT_THAT([] { ops::softmax(ops::ones({2, 3}), 5); }, ThrowsMessage<Error>(HasSubstr("Dimension out of range")));
  EXPECT_THAT([] { ops::select(ops::ones({3}), 0, 5); },
              ThrowsMessage<Error>(HasSubstr("index 5 out of range for tensor of size [3] at dimension 0")));
}

TEST(BadInputTest, WrongArgumentCountsAndTypesInBoxedCalls) {
  const OperatorHandle& mm = Dispatcher::singleton().get("aten::mm");
  Stack too_many = {ops::ones({2, 2}), ops::ones({2, 2}), ops::ones({2, 2})};
  EXPECT_THAT([&] { mm.call_boxed(too_many); },
              ThrowsMessage<Error>(HasSubstr("aten::mm() expected 2 argument(s) but received 3 argument(s)")));
  Stack wrong_type = {ops::ones({2, 2}), Value(int64_t{3})};
  EXPECT_THAT([&] { mm.call_boxed(wrong_type); },
              ThrowsMessage<Error>(HasSubstr("argument 'mat2' (position 2) must be Tensor, not int")));
  EXPECT_THAT([&] { mm.schema().bind({ops::ones({2, 2})}); },
              ThrowsMessage<Error>(HasSubstr("missing required argument 'mat2'")));
}

TEST(BadInputTest, EmptyTensorLists) {
  EXPECT_THAT([] { ops::cat(std::vector<Tensor>{}, 0); },
              ThrowsMessage<Error>(HasSubstr("torch.cat(): expected a non-empty list of Tensors")));
  EXPECT_THAT([] { ops::stack(std::vector<Tensor>{}, 0); }, ThrowsMessage<Error>(HasSubstr("stack expects a non-empty TensorList")));
}

TEST(BadInputTest, UnknownOps) {
  EXPECT_THAT([] { Dispatcher::singleton().get("aten::mmm"); }, ThrowsMessage<Error>(HasSubstr("unknown op 'aten::mmm'")));
}

TEST(BadInputTest, ReadingDataThatDoesNotExist) {
  EXPECT_THAT([] { ops::ones({2}, {.device = kMeta}).to_vector<float>(); },
              ThrowsMessage<Error>(HasSubstr("has no data")));
  EXPECT_THAT([] { ops::ones({3}).item(); },
              ThrowsMessage<Error>(HasSubstr("a Tensor with 3 elements cannot be converted to Scalar")));
}

// Sizes whose products overflow int64 are a clear error at the op that makes
// them, never a wrapped byte count that later views write past (issue 21.1;
// each case crashed or corrupted the heap before See Note [Checked sizes]).
TEST(BadInputTest, SizesThatOverflowAreAnErrorNotACorruptTensor) {
  constexpr int64_t k2e16 = int64_t{1} << 16, k2e28 = int64_t{1} << 28, k2e62 = int64_t{1} << 62;
  const auto too_large = ThrowsMessage<Error>(HasSubstr("Storage size calculation overflowed with sizes="));
  // 2^64 elements wrapped to 0 bytes; select x3 and fill_ then wrote 256 KiB.
  EXPECT_THAT([] { ops::zeros({k2e16, k2e16, k2e16, k2e16}); }, too_large);
  EXPECT_THAT([] { ops::zeros({k2e16, k2e16, k2e16, k2e16}, {.device = kMeta}); }, too_large);
  // 8 * (2^61 - 1) bytes wrapped to a tiny buffer (a heap-buffer-overflow write).
  EXPECT_THAT([] { ops::empty({(int64_t{1} << 61) - 1}, {.dtype = DType::kFloat64}); },
              ThrowsMessage<Error>(AllOf(HasSubstr("sizes=[2305843009213693951]"),
                                         HasSubstr("torch.float64 tensor of about 2^64.0 bytes is too large"))));
  // numel 0, but every other dim is real: a reduction over the 0 dim made 2^84 elements.
  EXPECT_THAT([] { ops::zeros({0, k2e28, k2e28, k2e28}); }, too_large);
  // An expanded view of 2^64 elements, and its contiguous copy.
  const Tensor one = ops::ones({1, 1});
  EXPECT_THAT([&] { ops::expand(one, {4, k2e62}); }, ThrowsMessage<Error>(HasSubstr("the number of elements")));
  // Views of an empty tensor whose other dims overflow their strides.
  const Tensor empty = ops::zeros({0});
  EXPECT_THAT([&] { ops::view(empty, {0, k2e62, k2e62}); }, too_large);
  EXPECT_THAT([&] { ops::view(empty, {k2e62, k2e62, -1}); }, ThrowsMessage<Error>(HasSubstr("is invalid for input of size 0")));
  EXPECT_THAT([] { ops::empty_strided({k2e16, 2}, {k2e62, 1}); },
              ThrowsMessage<Error>(HasSubstr("need more than 2^63 - 1 bytes of torch.float32 storage")));
  // Expanded inputs have no storage behind their sizes, so cat's sum can overflow.
  const Tensor big = ops::expand(ops::ones({1}), {k2e62 + (k2e62 - 1)});
  EXPECT_THAT([&] { ops::cat(std::vector<Tensor>{big, big}, 0); },
              ThrowsMessage<Error>(HasSubstr("aten::cat: the sizes in dimension 0 add up to more than 2^63 - 1")));
  // The largest sizes that fit still make tensors (meta: no memory behind them).
  EXPECT_EQ(ops::empty({int64_t{1} << 60}, {.dtype = DType::kFloat32, .device = kMeta}).numel(), int64_t{1} << 60);
  EXPECT_EQ(ops::zeros({0, k2e28, k2e28}, {.device = kMeta}).numel(), 0);
}

// ops::equal compared through double, so int64 values past 2^53 that differ
// by one compared equal (issue 22.7).
TEST(BadInputTest, EqualComparesLargeIntegersExactly) {
  const int64_t big = (int64_t{1} << 53) + 1;
  const Tensor a = ops::full({1}, big, {.dtype = DType::kInt64});
  const Tensor b = ops::full({1}, big - 1, {.dtype = DType::kInt64});
  EXPECT_FALSE(ops::equal(a, b));
  EXPECT_TRUE(ops::equal(a, ops::full({1}, big, {.dtype = DType::kInt64})));
}

// An undefined (default-constructed) Tensor where the schema wants a Tensor is
// refused before any kernel or mode sees it, in PyTorch's words, naming the op
// and the argument (Note [Undefined tensor arguments]); it crashed before.
TEST(BadInputTest, UndefinedTensorArguments) {
  const Tensor u, x = ops::ones({2, 2});
  auto refused = [](std::string_view op, std::string_view arg) {
    return ThrowsMessage<Error>(HasSubstr(str_cat(op, ": Expected a proper Tensor but got None (or an undefined ",
                                                  "Tensor in C++) for argument ", arg)));
  };
  EXPECT_THAT([&] { ops::relu(u); }, refused("aten::relu", "#0 'self'"));
  EXPECT_THAT([&] { ops::add(x, u); }, refused("aten::add.Tensor", "#1 'other'"));
  EXPECT_THAT([&] { ops::add(u, x); }, refused("aten::add.Tensor", "#0 'self'"));
  EXPECT_THAT([&] { (void)(x + u); }, refused("aten::add.Tensor", "#1 'other'"));
  EXPECT_THAT([&] { ops::mm(x, u); }, refused("aten::mm", "#1 'mat2'"));
  EXPECT_THAT([&] { ops::sum(u); }, refused("aten::sum", "#0 'self'"));
  EXPECT_THAT([&] { ops::view(u, {4}); }, refused("aten::view", "#0 'self'"));
  EXPECT_THAT([&] { ops::clone(u); }, refused("aten::clone", "#0 'self'"));
  EXPECT_THAT([&] { ops::softmax(u, 0); }, refused("aten::softmax.int", "#0 'self'"));
  EXPECT_THAT([&] { ops::where(ops::gt(x, 0.0), x, u); }, refused("aten::where.self", "#2 'other'"));
  EXPECT_THAT([&] { ops::zeros_like(u); }, refused("aten::zeros_like", "#0 'self'"));
  EXPECT_THAT([&] { ops::to(u, DType::kFloat64); }, refused("aten::to.dtype", "#0 'self'"));
  EXPECT_THAT([&] { ops::to(u, kMeta); }, refused("aten::to.device", "#0 'self'"));
  EXPECT_THAT([&] { u.detach(); }, refused("aten::detach", "#0 'self'"));
  EXPECT_THAT([&] { ops::linear(x, u); }, refused("aten::linear", "#1 'weight'"));
  Tensor dst = ops::zeros({2, 2}), undefined_dst;
  EXPECT_THAT([&] { ops::copy_(dst, u); }, refused("aten::copy_", "#1 'src'"));
  EXPECT_THAT([&] { ops::copy_(undefined_dst, x); }, refused("aten::copy_", "#0 'self'"));
  EXPECT_THAT([&] { u.item(); }, ThrowsMessage<Error>(HasSubstr("item() called on an undefined Tensor")));
  // Under a mode too: the mode never sees the call.
  struct Counting : DispatchMode {
    bool dispatch(OpCall& call) override {
      ++calls;
      call.proceed();
      return true;
    }
    int calls = 0;
  } mode;
  {
    ModeGuard guard(mode);
    EXPECT_THAT([&] { ops::add(x, u); }, refused("aten::add.Tensor", "#1 'other'"));
  }
  EXPECT_EQ(mode.calls, 0);
  // Boxed calls are checked the same way.
  const OperatorHandle& relu = Dispatcher::singleton().get("aten::relu");
  Stack stack{Value(u)};
  EXPECT_THAT([&] { relu.call_boxed(stack); }, refused("aten::relu", "#0 'self'"));
}

// Tensor[] elements are refused like Tensor arguments; None of a Tensor? or
// Tensor?[] stays legitimate.
TEST(BadInputTest, UndefinedTensorsInListsAndOptionalArguments) {
  const Tensor u, x = ops::ones({2, 3});
  for (const char* op : {"cat", "stack"}) {
    const std::string name = str_cat("aten::", op);
    auto call = [&] { return std::string(op) == "cat" ? ops::cat({x, u}) : ops::stack({x, u}); };
    EXPECT_THAT(call, ThrowsMessage<Error>(HasSubstr(str_cat(
                          name, ": Expected a proper Tensor but got None (or an undefined Tensor in C++) for sequence ",
                          "element 1 in sequence argument at position #0 'tensors'"))));
  }
  const Tensor w = ops::ones({4, 3});
  EXPECT_EQ(ops::linear(x, w, Tensor()).sizes(), IntArrayRef({2, 4}));  // an undefined bias is None
  EXPECT_EQ(ops::linear(x, w, std::nullopt).sizes(), IntArrayRef({2, 4}));
  const Tensor rows = ops::zeros({1}, {.dtype = DType::kInt64});
  EXPECT_EQ(ops::index(x, {std::nullopt, rows}).sizes(), IntArrayRef({2, 1}));  // None in a Tensor?[]
  const OperatorHandle& index = Dispatcher::singleton().get("aten::index.Tensor");
  Stack boxed{Value(x), Value(std::vector<Tensor>{Tensor(), rows})};
  index.call_boxed(boxed);
  EXPECT_EQ(boxed.at(0).to_tensor().sizes(), IntArrayRef({2, 1}));
}

// Calls op_crossref_test's random arguments reached that crashed (SIGFPE,
// SIGSEGV, a trap) or ran into undefined behaviour (signed overflow under
// UBSan) before, each pinned here: an opspec::Error, or the PyTorch result.
namespace crossref_regressions {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

Stack call(std::string_view name, std::vector<Value> args, std::vector<std::pair<std::string, Value>> kwargs = {}) {
  const OperatorHandle& op = Dispatcher::singleton().get(name);
  Stack stack = op.schema().bind(std::move(args), std::move(kwargs));
  op.call_boxed(stack);
  return stack;
}
Tensor zeros(std::vector<int64_t> sizes) { return ops::zeros(sizes); }

TEST(BadInputTest, CrossrefFindingsFailCleanly) {
  // nll_loss's backward read the gradient's first element before knowing it
  // reduced: an empty batch's unreduced gradient has none (a segfault).
  {
    const Tensor x = ops::zeros({0, 3}), t = ops::zeros({0}, {.dtype = DType::kInt64});
    auto [loss, total] = ops::nll_loss_forward(x, t, std::nullopt, ops::Reduction::kNone, -100);
    EXPECT_EQ(ops::nll_loss_backward(loss, x, t, std::nullopt, ops::Reduction::kNone, -100, total).numel(), 0);
    const Tensor x4 = ops::zeros({0, 3, 2, 2}), t3 = ops::zeros({0, 2, 2}, {.dtype = DType::kInt64});
    auto [loss2, total2] = ops::nll_loss2d_forward(x4, t3, std::nullopt, ops::Reduction::kNone, -100);
    EXPECT_EQ(ops::nll_loss2d_backward(loss2, x4, t3, std::nullopt, ops::Reduction::kNone, -100, total2).numel(), 0);
  }
  // Divisions by a zero-sized window or head count.
  EXPECT_THAT([] { call("aten::_adaptive_avg_pool2d_backward", {zeros({0, 2}), zeros({0, 2})}); },
              ThrowsMessage<Error>(HasSubstr("Expected 3D or 4D tensor")));
  EXPECT_THAT([] { call("aten::_adaptive_avg_pool2d_backward", {zeros({1, 2, 2}), zeros({1, 0, 2})}); },
              ThrowsMessage<Error>(HasSubstr("non-zero size for non-batch dimensions")));
  const Tensor q = zeros({4, 0, 1, 1});
  EXPECT_EQ(call("aten::scaled_dot_product_attention",
                 {q, q, q, std::nullopt, 0.0, false}, {{"enable_gqa", true}})[0].to_tensor().sizes(), q.sizes());
  // Reads past a list, and size(0) of a 0-dim tensor.
  EXPECT_THAT([] { call("aten::upsample_nearest2d.vec", {zeros({2, 0}), std::nullopt, std::vector<double>{}}); },
              ThrowsMessage<Error>(HasSubstr("upsample_nearest2d")));
  EXPECT_THAT([] { call("aten::group_norm", {zeros({}), 5}); },
              ThrowsMessage<Error>(HasSubstr("Dimension specified as 0 but tensor has no dimensions")));
  // Sizes near INT64_MAX: clear errors, not overflow.
  EXPECT_THAT([] { call("aten::native_group_norm", {zeros({}), std::nullopt, std::nullopt, kMax, 2, 5, 1, 1e-5}); },
              ThrowsMessage<Error>(HasSubstr("Expected X.numel() == N * C * HxW")));
  EXPECT_THAT([] { call("aten::native_group_norm", {zeros({2, 0}), std::nullopt, std::nullopt, -1, 4, 1, 4, 1e-5}); },
              ThrowsMessage<Error>(HasSubstr("negative dimension -1")));
  EXPECT_THAT([] { call("aten::constant_pad_nd", {zeros({2, 4}), std::vector<int64_t>{0, kMax}, 0}); },
              ThrowsMessage<Error>(HasSubstr("overflows int64")));
  EXPECT_THAT([] { call("aten::repeat", {zeros({2, 4}), std::vector<int64_t>{5, kMax, 1}}); },
              ThrowsMessage<Error>(HasSubstr("overflows int64")));
  EXPECT_THAT([] { call("aten::conv1d", {zeros({1, 1, 4}), zeros({1, 1, 2}), std::nullopt, std::vector<int64_t>{1},
                                         std::vector<int64_t>{kMax}, std::vector<int64_t>{1}, 1}); },
              ThrowsMessage<Error>(HasSubstr("overflow int64")));
  EXPECT_THAT([] { call("aten::chunk", {zeros({1, 0}), kMax, 1}); },
              ThrowsMessage<Error>(HasSubstr("empty chunks")));
  // ... and the results PyTorch gives where one exists.
  EXPECT_EQ(call("aten::chunk", {zeros({5}), kMax, 0})[0].to_tensor_list().size(), 5u);  // ceil(5 / kMax) each
  EXPECT_EQ(call("aten::split.Tensor", {zeros({2}), kMax, 0})[0].to_tensor_list().size(), 1u);
  const Tensor ones = ops::ones({3, 4});
  EXPECT_EQ(ops::sum(call("aten::triu", {ones, kMax})[0].to_tensor()).item().to_double(), 0.0);
  EXPECT_EQ(ops::sum(call("aten::tril", {ones, kMax})[0].to_tensor()).item().to_double(), 12.0);
  EXPECT_EQ(ops::sum(call("aten::triu", {ones, -kMax})[0].to_tensor()).item().to_double(), 12.0);
  EXPECT_EQ(call("aten::max_pool2d", {ops::ones({1, 3, 3}), std::vector<int64_t>{2}, std::vector<int64_t>{kMax}})[0]
                .to_tensor().sizes(), IntArrayRef({1, 1, 1}));
  // A 2^40-row gradient of width 0 allocates nothing and builds no per-row table.
  const Tensor g = call("aten::embedding_dense_backward",
                        {zeros({0}), ops::zeros({0}, {.dtype = DType::kInt64}), int64_t{1} << 40, 5, false})[0]
                       .to_tensor();
  EXPECT_EQ(g.sizes(), IntArrayRef({int64_t{1} << 40, 0}));
}

}  // namespace crossref_regressions

}  // namespace
}  // namespace opspec
