// blas.cc: CUDA kernels of mm, bmm, addmm, dot and mv through cuBLAS.
// See Note [Matrix products on CUDA].
#include "kernels/cuda/blas.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <optional>
#include <utility>

#include "kernels/cuda/cublas_loader.h"
#include "kernels/cuda/cuda_copy.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/common/linalg_meta.h"
#include "runtime/dispatch/library.h"

namespace opspec::internal {

// Note [Matrix products on CUDA]
// As on the CPU (See Note [Matrix products on CPU]), every product is a
// batched C[b] = alpha * A[b] @ B[b] (+ beta * C[b]) over [B, n, k] and
// [B, k, m] views, here one cublasGemmStridedBatchedEx call. cuBLAS is
// column-major, so a row-major C = A @ B is computed as the column-major
// C^T = B^T @ A^T: the operands are swapped, and an operand whose rows are
// unit-stride (a transpose) is passed as stored with CUBLAS_OP_T instead of
// being copied; only an operand with neither stride 1 is made contiguous.
// f32 and f64 compute in their own type (no TF32: cuBLAS's default math);
// f16 and bf16 accumulate in f32 and round once, as PyTorch's CUDA kernels
// and the CPU's widen-multiply-round do. Results agree with the CPU to
// rounding (the summation order differs), not bit for bit. Integer and
// bool products throw NotImplementedError, as PyTorch's CUDA kernels do
// ("addmm_cuda" not implemented for 'Long'). dot and mv are products with a
// batch of one vector (the same gemm), one code path for every dtype.

namespace {

void check_cublas(cublasStatus_t s, std::string_view op) {
  OPSPEC_CHECK(s == CUBLAS_STATUS_SUCCESS, op, ": cuBLAS failed: ", cuda::cublas().status_name(s), " (",
               cuda::cublas().status_string(s), ")");
}

// check_floating: cuBLAS products take floating dtypes only; kernel is
// PyTorch's CUDA kernel name for its message ("addmm_cuda").
void check_floating(DType d, std::string_view op, std::string_view kernel) {
  if (!is_floating(d)) {
    throw_not_implemented(str_cat(op, ": \"", kernel, "\" not implemented for '", scalar_type_name(d), "'"));
  }
}

// handle: this thread's cuBLAS handle for the current device (handles are
// not safe to share between threads), on the legacy default stream like
// every other CUDA kernel here.
cublasHandle_t handle() {
  constexpr int kMaxDevices = 64;
  thread_local cublasHandle_t handles[kMaxDevices] = {};
  int device = 0;
  cuda::check(cudaGetDevice(&device), "cuBLAS");
  OPSPEC_CHECK(device >= 0 && device < kMaxDevices, "cuBLAS: device index ", device, " out of range");
  if (handles[device] == nullptr) {
    check_cublas(cuda::cublas().create(&handles[device]), "cublasCreate");
    check_cublas(cuda::cublas().set_stream(handles[device], nullptr), "cublasSetStream");
  }
  return handles[device];
}

// GemmOperand: a [B, rows, cols] operand as cuBLAS reads it.
struct GemmOperand {
  Tensor holder;  // keeps a contiguous copy alive
  const void* data = nullptr;
  int64_t batch_stride = 0;
  cublasOperation_t op = CUBLAS_OP_N;
  int64_t ld = 1;
};

// gemm_layout: how a row-major rows x cols matrix with strides (s0, s1) is
// passed (CUBLAS_OP_N: rows unit-stride in memory order, as stored; OP_T: a
// transpose), or nullopt when neither stride is 1 (the CPU's blas_layout).
std::optional<std::pair<cublasOperation_t, int64_t>> gemm_layout(int64_t rows, int64_t cols, int64_t s0, int64_t s1) {
  if ((s1 == 1 || cols == 1) && (rows == 1 || s0 >= std::max<int64_t>(1, cols))) {
    return std::make_pair(CUBLAS_OP_N, rows == 1 ? std::max<int64_t>(1, cols) : s0);
  }
  if ((s0 == 1 || rows == 1) && (cols == 1 || s1 >= std::max<int64_t>(1, rows))) {
    return std::make_pair(CUBLAS_OP_T, cols == 1 ? std::max<int64_t>(1, rows) : s1);
  }
  return std::nullopt;
}

GemmOperand prepare(const Tensor& t3, std::string_view op) {
  Tensor t = t3;
  const int64_t rows = t.sizes()[1], cols = t.sizes()[2];
  auto layout = gemm_layout(rows, cols, t.strides()[1], t.strides()[2]);
  if (!layout) {
    t = cuda::contiguous_cuda(t);
    layout = gemm_layout(rows, cols, t.strides()[1], t.strides()[2]);
    OPSPEC_INTERNAL_ASSERT(layout.has_value());
  }
  OPSPEC_CHECK(rows < INT_MAX && cols < INT_MAX && layout->second < INT_MAX, op, ": matrix of shape [", rows, ", ",
               cols, "] is too large for cuBLAS");
  return {t, t.raw_data(), t.sizes()[0] == 1 ? 0 : t.strides()[0], layout->first, layout->second};
}

cudaDataType_t cuda_type(DType d) {
  switch (d) {
    case DType::kFloat32: return CUDA_R_32F;
    case DType::kFloat64: return CUDA_R_64F;
    case DType::kFloat16: return CUDA_R_16F;
    default: return CUDA_R_16BF;
  }
}

// as_batch: a [1, rows, cols] view of a matrix.
Tensor as_batch(const Tensor& m) {
  return make_view(m, {1, m.sizes()[0], m.sizes()[1]}, {0, m.strides()[0], m.strides()[1]}, m.storage_offset());
}

// matmul_into: c = alpha * a @ b (+ beta * c when accumulate) for a [B, n, k],
// b [B, k, m] and a fresh contiguous c [B, n, m] that holds the addend when
// accumulate. See Note [Matrix products on CUDA].
void matmul_into(const Tensor& a, const Tensor& b, const Tensor& c, const Scalar& alpha, const Scalar& beta,
                 bool accumulate, std::string_view op) {
  const DType d = c.dtype();
  if (c.numel() == 0) return;
  const int64_t batches = c.sizes()[0], n = c.sizes()[1], m = c.sizes()[2], k = a.sizes()[2];
  OPSPEC_CHECK(n < INT_MAX && m < INT_MAX && k < INT_MAX && batches < INT_MAX, op, ": matrices too large for cuBLAS");
  cuda::DeviceGuard guard(c.device());
  const bool f64 = d == DType::kFloat64;
  const double alpha64 = alpha.to_double(), beta64 = accumulate ? beta.to_double() : 0.0;
  const float alpha32 = static_cast<float>(alpha64), beta32 = static_cast<float>(beta64);
  const void* alpha_ptr = f64 ? static_cast<const void*>(&alpha64) : &alpha32;
  const void* beta_ptr = f64 ? static_cast<const void*>(&beta64) : &beta32;
  const cudaDataType_t type = cuda_type(d);
  if (k == 0) {  // an empty sum: only the beta term remains
    if (beta64 == 0) {
      cuda::check(cudaMemsetAsync(c.raw_data(), 0, static_cast<size_t>(c.nbytes()), nullptr), op);
    } else {
      OPSPEC_CHECK(c.numel() < INT_MAX, op, ": matrices too large for cuBLAS");
      check_cublas(cuda::cublas().scal_ex(handle(), static_cast<int>(c.numel()), beta_ptr,
                                          f64 ? CUDA_R_64F : CUDA_R_32F, c.raw_data(), type, 1,
                                          f64 ? CUDA_R_64F : CUDA_R_32F),
                   op);
    }
    return;
  }
  const GemmOperand pa = prepare(a, op), pb = prepare(b, op);
  // Column-major C^T [m, n] = B^T [m, k] @ A^T [k, n]: b first.
  check_cublas(cuda::cublas().gemm_strided_batched_ex(
                   handle(), pb.op, pa.op, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha_ptr,
                   pb.data, type, static_cast<int>(pb.ld), pb.batch_stride, pa.data, type, static_cast<int>(pa.ld),
                   pa.batch_stride, beta_ptr, c.raw_data(), type, static_cast<int>(m), n * m,
                   static_cast<int>(batches), f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               op);
}

Tensor mm_cuda(const Tensor& self, const Tensor& mat2) {
  const SizeVec shape = mm_shape(self, mat2, "aten::mm");
  check_floating(self.dtype(), "aten::mm", "addmm_cuda");
  Tensor out = cuda::empty_cuda(shape, self.dtype(), self.device());
  matmul_into(as_batch(self), as_batch(mat2), as_batch(out), 1, 0, /*accumulate=*/false, "aten::mm");
  return out;
}

Tensor bmm_cuda(const Tensor& self, const Tensor& mat2) {
  const SizeVec shape = bmm_shape(self, mat2);
  check_floating(self.dtype(), "aten::bmm", "bmm_cuda");
  Tensor out = cuda::empty_cuda(shape, self.dtype(), self.device());
  matmul_into(self, mat2, out, 1, 0, /*accumulate=*/false, "aten::bmm");
  return out;
}

Tensor addmm_cuda(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
                  const Scalar& alpha) {
  const SizeVec shape = addmm_shape(self, mat1, mat2);
  check_floating(mat1.dtype(), "aten::addmm", "addmm_cuda");
  Tensor out = cuda::empty_cuda(shape, mat1.dtype(), mat1.device());
  // beta == 0 ignores self entirely (NaN and inf included), as BLAS does.
  const bool accumulate = beta.to_double() != 0;
  if (accumulate && out.numel() > 0) cuda::device_copy(out, self);
  matmul_into(as_batch(mat1), as_batch(mat2), as_batch(out), alpha, beta, accumulate, "aten::addmm");
  return out;
}

Tensor dot_cuda(const Tensor& self, const Tensor& tensor) {
  dot_shape(self, tensor);
  check_floating(self.dtype(), "aten::dot", "dot");
  Tensor out = cuda::empty_cuda({}, self.dtype(), self.device());
  const int64_t k = self.numel();
  // [1, 1, k] @ [1, k, 1].
  const Tensor a = make_view(self, {1, 1, k}, {0, 0, self.stride(0)}, self.storage_offset());
  const Tensor b = make_view(tensor, {1, k, 1}, {0, tensor.stride(0), 1}, tensor.storage_offset());
  matmul_into(a, b, make_view(out, {1, 1, 1}, {1, 1, 1}, 0), 1, 0, /*accumulate=*/false, "aten::dot");
  return out;
}

Tensor mv_cuda(const Tensor& self, const Tensor& vec) {
  const SizeVec shape = mv_shape(self, vec);
  check_floating(self.dtype(), "aten::mv", "addmv_impl_cuda");
  Tensor out = cuda::empty_cuda(shape, self.dtype(), self.device());
  const int64_t n = self.sizes()[0], k = self.sizes()[1];
  // [1, n, k] @ [1, k, 1].
  const Tensor b = make_view(vec, {1, k, 1}, {0, vec.stride(0), 1}, vec.storage_offset());
  matmul_into(as_batch(self), b, make_view(out, {1, n, 1}, {0, 1, 1}, 0), 1, 0, /*accumulate=*/false, "aten::mv");
  return out;
}

}  // namespace

void register_cuda_blas_kernels(Library& lib) {
  lib.impl("mm", DispatchKey::kCUDA, &mm_cuda)
      .impl("bmm", DispatchKey::kCUDA, &bmm_cuda)
      .impl("addmm", DispatchKey::kCUDA, &addmm_cuda)
      .impl("dot", DispatchKey::kCUDA, &dot_cuda)
      .impl("mv", DispatchKey::kCUDA, &mv_cuda);
}

}  // namespace opspec::internal
