// register_reduction.cc: registers the CPU and Meta kernels of the
// reductions, softmax, layer norm (register_reduction_kernels) and the matrix
// products (register_linalg_kernels).
#include <tuple>

#include "kernels/common/linalg_meta.h"
#include "kernels/common/reduce_meta.h"
#include "kernels/common/registration.h"
#include "runtime/dispatch/library.h"
#include "runtime/fused/matmul_epilogue.h"

namespace opspec::internal {

// CPU kernels, defined in reduce.cc, stats.cc, softmax.cc, layer_norm.cc and blas.cc.
Tensor sum_cpu(const Tensor& self, std::optional<DType> dtype);
Tensor sum_dim_cpu(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype);
Tensor mean_cpu(const Tensor& self, std::optional<DType> dtype);
Tensor mean_dim_cpu(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype);
Tensor amax_cpu(const Tensor& self, IntArrayRef dim, bool keepdim);
Tensor amin_cpu(const Tensor& self, IntArrayRef dim, bool keepdim);
Tensor linalg_vector_norm_cpu(const Tensor& self, const Scalar& ord, OptionalIntArrayRef dim, bool keepdim,
                              std::optional<DType> dtype);
Tensor var_correction_cpu(const Tensor& self, OptionalIntArrayRef dim, const std::optional<Scalar>& correction,
                          bool keepdim);
Tensor std_correction_cpu(const Tensor& self, OptionalIntArrayRef dim, const std::optional<Scalar>& correction,
                          bool keepdim);
std::tuple<Tensor, Tensor> var_mean_correction_cpu(const Tensor& self, OptionalIntArrayRef dim,
                                                   const std::optional<Scalar>& correction, bool keepdim);
Tensor logsumexp_cpu(const Tensor& self, IntArrayRef dim, bool keepdim);
Tensor any_cpu(const Tensor& self);
Tensor any_dim_cpu(const Tensor& self, int64_t dim, bool keepdim);
Tensor all_cpu(const Tensor& self);
Tensor all_dim_cpu(const Tensor& self, int64_t dim, bool keepdim);
Tensor softmax_cpu(const Tensor& self, int64_t dim, bool half_to_float);
Tensor log_softmax_cpu(const Tensor& self, int64_t dim, bool half_to_float);
std::tuple<Tensor, Tensor, Tensor> native_layer_norm_cpu(const Tensor& input, IntArrayRef normalized_shape,
                                                         const std::optional<Tensor>& weight,
                                                         const std::optional<Tensor>& bias, double eps);
Tensor mm_cpu(const Tensor& self, const Tensor& mat2);
Tensor bmm_cpu(const Tensor& self, const Tensor& mat2);
Tensor addmm_cpu(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha);
Tensor dot_cpu(const Tensor& self, const Tensor& tensor);
Tensor mv_cpu(const Tensor& self, const Tensor& vec);

void register_reduction_kernels(Dispatcher& d) {
  Library lib("aten", d);
  lib.impl("sum", DispatchKey::kCPU, &sum_cpu)
      .impl("sum", DispatchKey::kMeta, &sum_meta)
      .impl("sum.dim_IntList", DispatchKey::kCPU, &sum_dim_cpu)
      .impl("sum.dim_IntList", DispatchKey::kMeta, &sum_dim_meta)
      .impl("mean", DispatchKey::kCPU, &mean_cpu)
      .impl("mean", DispatchKey::kMeta, &mean_meta)
      .impl("mean.dim", DispatchKey::kCPU, &mean_dim_cpu)
      .impl("mean.dim", DispatchKey::kMeta, &mean_dim_meta)
      .impl("amax", DispatchKey::kCPU, &amax_cpu)
      .impl("amax", DispatchKey::kMeta, &amax_meta)
      .impl("amin", DispatchKey::kCPU, &amin_cpu)
      .impl("amin", DispatchKey::kMeta, &amin_meta)
      .impl("linalg_vector_norm", DispatchKey::kCPU, &linalg_vector_norm_cpu)
      .impl("linalg_vector_norm", DispatchKey::kMeta, &linalg_vector_norm_meta)
      .impl("var.correction", DispatchKey::kCPU, &var_correction_cpu)
      .impl("var.correction", DispatchKey::kMeta, &var_correction_meta)
      .impl("std.correction", DispatchKey::kCPU, &std_correction_cpu)
      .impl("std.correction", DispatchKey::kMeta, &std_correction_meta)
      .impl("var_mean.correction", DispatchKey::kCPU, &var_mean_correction_cpu)
      .impl("var_mean.correction", DispatchKey::kMeta, &var_mean_correction_meta)
      .impl("logsumexp", DispatchKey::kCPU, &logsumexp_cpu)
      .impl("logsumexp", DispatchKey::kMeta, &logsumexp_meta)
      .impl("any", DispatchKey::kCPU, &any_cpu)
      .impl("any", DispatchKey::kMeta, &any_meta)
      .impl("any.dim", DispatchKey::kCPU, &any_dim_cpu)
      .impl("any.dim", DispatchKey::kMeta, &any_dim_meta)
      .impl("all", DispatchKey::kCPU, &all_cpu)
      .impl("all", DispatchKey::kMeta, &all_meta)
      .impl("all.dim", DispatchKey::kCPU, &all_dim_cpu)
      .impl("all.dim", DispatchKey::kMeta, &all_dim_meta)
      .impl("_softmax", DispatchKey::kCPU, &softmax_cpu)
      .impl("_softmax", DispatchKey::kMeta, &softmax_meta)
      .impl("_log_softmax", DispatchKey::kCPU, &log_softmax_cpu)
      .impl("_log_softmax", DispatchKey::kMeta, &log_softmax_meta)
      .impl("native_layer_norm", DispatchKey::kCPU, &native_layer_norm_cpu)
      .impl("native_layer_norm", DispatchKey::kMeta, &native_layer_norm_meta);
}

bool linear_blocks_cpu(const Tensor& out, const Tensor& input, const Tensor& weight, const Tensor* bias,
                       absl::FunctionRef<void()> start, MatrixBlockFn done);

void register_linalg_kernels(Dispatcher& d) {
  register_linear_blocks(DeviceType::kCPU, &linear_blocks_cpu);  // See Note [Matmul epilogues]
  Library lib("aten", d);
  lib.impl("mm", DispatchKey::kCPU, &mm_cpu)
      .impl("mm", DispatchKey::kMeta, &mm_meta)
      .impl("bmm", DispatchKey::kCPU, &bmm_cpu)
      .impl("bmm", DispatchKey::kMeta, &bmm_meta)
      .impl("addmm", DispatchKey::kCPU, &addmm_cpu)
      .impl("addmm", DispatchKey::kMeta, &addmm_meta)
      .impl("dot", DispatchKey::kCPU, &dot_cpu)
      .impl("dot", DispatchKey::kMeta, &dot_meta)
      .impl("mv", DispatchKey::kCPU, &mv_cpu)
      .impl("mv", DispatchKey::kMeta, &mv_meta);
}

}  // namespace opspec::internal
