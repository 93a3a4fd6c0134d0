// gemm.h: one row-major OpenBLAS gemm in float or double on the calling
// thread, for kernels that multiply tiles of their own (attention, convolution);
// matrix products themselves go through blas.cc.
#pragma once

#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace opspec::internal {

// blas_ld: the leading dimension BLAS accepts for a row-major rows x cols
// matrix stored with row stride ld: one row's stride is never read, and a
// size-1 dim's stride may be anything (a view's, an expand's), so it becomes
// the row length, as blas.cc's blas_layout and c10's gemm wrappers do.
inline int64_t blas_ld(int64_t rows, int64_t cols, int64_t ld) {
  return rows <= 1 ? std::max<int64_t>({ld, cols, 1}) : ld;
}

// gemm: C (m x n, ldc) = alpha * op(A) op(B) + beta * C, op transposing when ta / tb.
template <class C>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, C alpha, const C* a, int64_t lda, const C* b,
          int64_t ldb, C beta, C* c, int64_t ldc) {
  lda = ta ? blas_ld(k, m, lda) : blas_ld(m, k, lda);
  ldb = tb ? blas_ld(n, k, ldb) : blas_ld(k, n, ldb);
  ldc = blas_ld(m, n, ldc);
  const auto t_a = ta ? CblasTrans : CblasNoTrans;
  const auto t_b = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<C, double>) {
    cblas_dgemm(CblasRowMajor, t_a, t_b, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
                static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
  } else {
    cblas_sgemm(CblasRowMajor, t_a, t_b, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
                static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
  }
}

}  // namespace opspec::internal
