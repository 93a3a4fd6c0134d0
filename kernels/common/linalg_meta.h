// linalg_meta.h: shape, dtype and device rules of the matrix products (mm,
// bmm, addmm, dot, mv), shared by their CPU and Meta kernels, plus the Meta
// kernels themselves.
#pragma once

#include "runtime/core/shape_utils.h"
#include "runtime/core/tensor.h"

namespace opspec::internal {

// mm_shape: [n, m] for self [n, k] @ mat2 [k, m]; checks ranks, sizes, dtypes and devices for op
// ("aten::mm"; addmm passes its own name and argument names mat1/mat2).
SizeVec mm_shape(const Tensor& self, const Tensor& mat2, std::string_view op, std::string_view self_name = "self",
                 std::string_view mat2_name = "mat2");
// bmm_shape: [b, n, m] for self [b, n, k] @ mat2 [b, k, m].
SizeVec bmm_shape(const Tensor& self, const Tensor& mat2);
// addmm_shape: [n, m] for mat1 [n, k] @ mat2 [k, m]; self must broadcast to it and share the dtype.
SizeVec addmm_shape(const Tensor& self, const Tensor& mat1, const Tensor& mat2);
// dot_shape: [] for two 1-D tensors of one length.
SizeVec dot_shape(const Tensor& self, const Tensor& tensor);
// mv_shape: [n] for self [n, k] @ vec [k].
SizeVec mv_shape(const Tensor& self, const Tensor& vec);

// Meta kernels: outputs with the CPU kernels' sizes and dtypes, and no data.
Tensor mm_meta(const Tensor& self, const Tensor& mat2);
Tensor bmm_meta(const Tensor& self, const Tensor& mat2);
Tensor addmm_meta(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha);
Tensor dot_meta(const Tensor& self, const Tensor& tensor);
Tensor mv_meta(const Tensor& self, const Tensor& vec);

}  // namespace opspec::internal
