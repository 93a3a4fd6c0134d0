// The CUDA backend's registrations and device checks, which need no GPU:
// every builtin op with a CPU kernel has a CUDA kernel, and mixing a cuda
// tensor with a non-scalar cpu tensor fails before any data is touched.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/cuda/cuda_test_util.h"
#include "runtime/dispatch/dispatcher.h"

namespace opspec {
namespace cuda_register_cuda_test {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::ThrowsMessage;
using testing::claiming_cuda;

constexpr char kMixed[] = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!";

TEST(CudaRegistrationTest, EveryBuiltinOpWithACpuKernelHasACudaKernel) {
  std::vector<std::string> missing;
  int cuda_kernels = 0;
  for (const OperatorHandle* op : Dispatcher::singleton().ops()) {
    if (op->name().rfind("aten::", 0) != 0) continue;  // ops other tests define
    if (op->has_kernel(DispatchKey::kCUDA)) ++cuda_kernels;
    if (op->has_kernel(DispatchKey::kCPU) && !op->has_kernel(DispatchKey::kCUDA)) missing.push_back(op->name());
  }
  EXPECT_THAT(missing, IsEmpty());
  EXPECT_GT(cuda_kernels, 90);
}

TEST(CudaRegistrationTest, DispatchTableShowsTheCudaKernel) {
  const Dispatcher& d = Dispatcher::singleton();
  for (const char* op : {"aten::add.Tensor", "aten::view", "aten::sum", "aten::randn", "aten::_to_copy"}) {
    EXPECT_THAT(d.dump_dispatch_table(d.get(op)), HasSubstr("CUDA: kernel")) << op;
  }
}

TEST(CudaRegistrationTest, MixingCudaWithANonScalarCpuTensorIsAnError) {
  const Tensor x = claiming_cuda(ops::ones({3}));
  const Tensor cpu = ops::ones({3});
  EXPECT_THAT([&] { ops::add(x, cpu); }, ThrowsMessage<Error>(HasSubstr(kMixed)));
  EXPECT_THAT([&] { ops::mul(x, cpu); }, ThrowsMessage<Error>(HasSubstr(kMixed)));
  EXPECT_THAT([&] { ops::eq(x, cpu); }, ThrowsMessage<Error>(HasSubstr(kMixed)));
  EXPECT_THAT([&] { ops::where(ops::gt(cpu, 0.0), x, x); },
              ThrowsMessage<Error>(HasSubstr("Expected all tensors to be on the same device")));
  EXPECT_THAT([&] { ops::cat({x, cpu}); }, ThrowsMessage<Error>(HasSubstr(kMixed)));
  Tensor self = x;
  EXPECT_THAT([&] { ops::add_(self, cpu); }, ThrowsMessage<Error>(HasSubstr("Expected all tensors to be on the same device")));
  EXPECT_THAT([&] { ops::layer_norm(claiming_cuda(ops::ones({2, 3})), {3}, ops::ones({3})); },
              ThrowsMessage<Error>(HasSubstr(kMixed)));
}

TEST(CudaRegistrationTest, ACpuScalarMayJoinACudaOp) {
  // The device check passes; without a GPU the op then stops at the device.
  if (get_device_hooks(DeviceType::kCUDA).is_available()) GTEST_SKIP() << "a CUDA device is available";
  const Tensor x = claiming_cuda(ops::ones({3}));
  for (const Tensor& scalar : {ops::scalar_tensor(2.0), ops::full({}, 1, {.dtype = DType::kInt64})}) {
    EXPECT_THAT([&] { ops::add(x, scalar); }, ThrowsMessage<Error>(HasSubstr(std::string(kNoCudaDeviceMessage))));
  }
  EXPECT_THAT([&] { ops::mul(x, 2.0); }, ThrowsMessage<Error>(HasSubstr("aten::mul: CUDA requested but no device")));
}

}  // namespace
}  // namespace opspec
