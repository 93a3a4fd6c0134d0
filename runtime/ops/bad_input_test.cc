// One test per class of bad input the issue names: each must raise
// opspec::Error naming the op, the argument and expected vs actual; never crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/dispatch/dispatcher.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

TEST(BadInputTest, ShapeMismatch) {
  EXPECT_THAT([] { ops::mm(ops::ones({2, 4}), ops::ones({5, 3})); },
              ThrowsMessage<Error>(HasSubstr("aten::mm: mat2 has shape [5, 3]; expected 4 rows to match self [2, 4]")));
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
              ThrowsMessage<Error>(HasSubstr("dimension out of range (expected to be in range of [-2, 1], but got 2)")));
  EXPECT_THAT([] { ops::transpose(ops::ones({2, 3}), 0, -3); }, ThrowsMessage<Error>(HasSubstr("dimension out of range")));
  EXPECT_THAT([] { ops::softmax(ops::ones({2, 3}), 5); }, ThrowsMessage<Error>(HasSubstr("dimension out of range")));
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

}  // namespace
}  // namespace opspec
