// register_factory.cc: registers the factory, random, fill and join kernels
// (kernels/cpu/{factory,random,join}.cc) and their Meta kernels
// (kernels/meta/factory_meta.cc).
#include <optional>
#include <tuple>

#include "kernels/common/factory_meta.h"
#include "kernels/common/registration.h"
#include "runtime/dispatch/library.h"

namespace opspec::internal {

// The CPU kernels are only reachable through the dispatcher, so they are
// declared here rather than in a header. The parameters follow
// runtime/dispatch/signature.h (Layout and MemoryFormat are int64_t).
using OptDType = std::optional<DType>;
using OptInt = std::optional<int64_t>;
using OptDevice = std::optional<Device>;
using OptBool = std::optional<bool>;

// factory.cc
Tensor empty_cpu(IntArrayRef size, OptDType dtype, OptInt layout, OptDevice device, OptBool pin_memory,
                 OptInt memory_format);
Tensor empty_strided_cpu(IntArrayRef size, IntArrayRef stride, OptDType dtype, OptInt layout, OptDevice device,
                         OptBool pin_memory);
Tensor zeros_cpu(IntArrayRef size, OptDType dtype, OptInt layout, OptDevice device, OptBool pin_memory);
Tensor new_zeros_cpu(const Tensor& self, IntArrayRef size, OptDType dtype, OptInt layout, OptDevice device,
                     OptBool pin_memory);
Tensor ones_cpu(IntArrayRef size, OptDType dtype, OptInt layout, OptDevice device, OptBool pin_memory);
Tensor full_cpu(IntArrayRef size, const Scalar& fill_value, OptDType dtype, OptInt layout, OptDevice device,
                OptBool pin_memory);
Tensor scalar_tensor_cpu(const Scalar& s, OptDType dtype, OptInt layout, OptDevice device, OptBool pin_memory);
Tensor arange_cpu(const Scalar& end, OptDType dtype, OptInt layout, OptDevice device, OptBool pin_memory);
Tensor arange_start_cpu(const Scalar& start, const Scalar& end, OptDType dtype, OptInt layout, OptDevice device,
                        OptBool pin_memory);
Tensor arange_start_step_cpu(const Scalar& start, const Scalar& end, const Scalar& step, OptDType dtype,
                             OptInt layout, OptDevice device, OptBool pin_memory);
Tensor empty_like_cpu(const Tensor& self, OptDType dtype, OptInt layout, OptDevice device, OptBool pin_memory,
                      OptInt memory_format);
Tensor zeros_like_cpu(const Tensor& self, OptDType dtype, OptInt layout, OptDevice device, OptBool pin_memory,
                      OptInt memory_format);
Tensor ones_like_cpu(const Tensor& self, OptDType dtype, OptInt layout, OptDevice device, OptBool pin_memory,
                     OptInt memory_format);
Tensor full_like_cpu(const Tensor& self, const Scalar& fill_value, OptDType dtype, OptInt layout, OptDevice device,
                     OptBool pin_memory, OptInt memory_format);
Tensor fill_cpu(const Tensor& self, const Scalar& value);
Tensor zero_cpu(const Tensor& self);
Tensor fill_tensor_cpu(const Tensor& self, const Tensor& value);
// random.cc
Tensor rand_cpu(IntArrayRef size, OptDType dtype, OptInt layout, OptDevice device, OptBool pin_memory);
Tensor randn_cpu(IntArrayRef size, OptDType dtype, OptInt layout, OptDevice device, OptBool pin_memory);
Tensor rand_like_cpu(const Tensor& self, OptDType dtype, OptInt layout, OptDevice device, OptBool pin_memory,
                     OptInt memory_format);
Tensor randn_like_cpu(const Tensor& self, OptDType dtype, OptInt layout, OptDevice device, OptBool pin_memory,
                      OptInt memory_format);
Tensor bernoulli_float_cpu(const Tensor& self, double p, OptInt generator);
std::tuple<Tensor, Tensor> native_dropout_cpu(const Tensor& input, double p, OptBool train);
// join.cc
Tensor cat_cpu(TensorList tensors, int64_t dim);
Tensor stack_cpu(TensorList tensors, int64_t dim);
Scalar local_scalar_dense_cpu(const Tensor& self);

void register_factory_kernels(Dispatcher& d) {
  Library lib("aten", d);
  constexpr DispatchKey kCPUKey = DispatchKey::kCPU, kMetaKey = DispatchKey::kMeta;
  lib.impl("empty.memory_format", kCPUKey, &empty_cpu)
      .impl("empty.memory_format", kMetaKey, &empty_meta)
      .impl("empty_strided", kCPUKey, &empty_strided_cpu)
      .impl("empty_strided", kMetaKey, &empty_strided_meta)
      .impl("zeros", kCPUKey, &zeros_cpu)
      .impl("zeros", kMetaKey, &zeros_meta)
      // Opspec has no ZeroTensor: PyTorch's _efficientzerotensor is plain zeros here.
      .impl("_efficientzerotensor", kCPUKey, &zeros_cpu)
      .impl("_efficientzerotensor", kMetaKey, &zeros_meta)
      .impl("new_zeros", kCPUKey, &new_zeros_cpu)
      .impl("new_zeros", kMetaKey, &new_zeros_meta)
      .impl("ones", kCPUKey, &ones_cpu)
      .impl("ones", kMetaKey, &ones_meta)
      .impl("full", kCPUKey, &full_cpu)
      .impl("full", kMetaKey, &full_meta)
      .impl("scalar_tensor", kCPUKey, &scalar_tensor_cpu)
      .impl("scalar_tensor", kMetaKey, &scalar_tensor_meta)
      .impl("arange", kCPUKey, &arange_cpu)
      .impl("arange", kMetaKey, &arange_meta)
      .impl("arange.start", kCPUKey, &arange_start_cpu)
      .impl("arange.start", kMetaKey, &arange_start_meta)
      .impl("arange.start_step", kCPUKey, &arange_start_step_cpu)
      .impl("arange.start_step", kMetaKey, &arange_start_step_meta)
      .impl("empty_like", kCPUKey, &empty_like_cpu)
      .impl("empty_like", kMetaKey, &empty_like_meta)
      .impl("zeros_like", kCPUKey, &zeros_like_cpu)
      .impl("zeros_like", kMetaKey, &zeros_like_meta)
      .impl("ones_like", kCPUKey, &ones_like_cpu)
      .impl("ones_like", kMetaKey, &ones_like_meta)
      .impl("full_like", kCPUKey, &full_like_cpu)
      .impl("full_like", kMetaKey, &full_like_meta)
      .impl("fill_.Scalar", kCPUKey, &fill_cpu)
      .impl("fill_.Scalar", kMetaKey, &fill_meta)
      .impl("fill_.Tensor", kCPUKey, &fill_tensor_cpu)
      .impl("fill_.Tensor", kMetaKey, &fill_tensor_meta)
      .impl("zero_", kCPUKey, &zero_cpu)
      .impl("zero_", kMetaKey, &zero_meta);
  lib.impl("rand", kCPUKey, &rand_cpu)
      .impl("rand", kMetaKey, &rand_meta)
      .impl("randn", kCPUKey, &randn_cpu)
      .impl("randn", kMetaKey, &randn_meta)
      .impl("rand_like", kCPUKey, &rand_like_cpu)
      .impl("rand_like", kMetaKey, &rand_like_meta)
      .impl("randn_like", kCPUKey, &randn_like_cpu)
      .impl("randn_like", kMetaKey, &randn_like_meta)
      .impl("bernoulli_.float", kCPUKey, &bernoulli_float_cpu)
      .impl("bernoulli_.float", kMetaKey, &bernoulli_float_meta)
      .impl("native_dropout", kCPUKey, &native_dropout_cpu)
      .impl("native_dropout", kMetaKey, &native_dropout_meta);
  lib.impl("cat", kCPUKey, &cat_cpu)
      .impl("cat", kMetaKey, &cat_meta)
      .impl("stack", kCPUKey, &stack_cpu)
      .impl("stack", kMetaKey, &stack_meta)
      .impl("_local_scalar_dense", kCPUKey, &local_scalar_dense_cpu)
      .impl("_local_scalar_dense", kMetaKey, &local_scalar_dense_meta);
}

}  // namespace opspec::internal
