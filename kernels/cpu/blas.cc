// blas.cc: CPU kernels of mm, bmm, addmm, dot and mv.
// See Note [Matrix products on CPU].
#include <cblas.h>

#include <algorithm>
#include <climits>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/cpu/copy.h"
#include "kernels/cpu/loops.h"
#include "kernels/common/linalg_meta.h"
#include "kernels/cpu/parallel_rows.h"
#include "runtime/core/parallel.h"
#include "runtime/fused/matmul_epilogue.h"

namespace opspec::internal {

namespace {

// Note [Matrix products on CPU]
// Every product is a batched C[b] = alpha * A[b] @ B[b] (+ beta * C[b]) on
// [B, n, k] and [B, k, m] views (mm, addmm, mv and dot are batches of one).
// f32 and f64 go to OpenBLAS; an operand whose rows or columns are unit-stride
// (a transpose or a slice) is passed as is with CblasTrans / its leading
// dimension, anything else is copied contiguous first. f16 and bf16 are
// widened to f32, multiplied by sgemm (float accumulation) and rounded once,
// like PyTorch's CPU kernels. Integers use a plain loop accumulating in
// uint64, so overflow wraps exactly as int32/int64 arithmetic does.
//
// Note [Small matrix products]
// A product of at most kSmallProduct multiply-adds (per batch; dot and mv
// too) skips BLAS for a loop that sums each element in k order, with separate
// multiplies and adds (-ffp-contract=off). OpenBLAS picks its kernel by CPU
// model, and the kernels sum and fuse differently: a 4x4 product hashed in a
// spec golden came out different on an AMD EPYC than on the Xeon that wrote
// it. Small products, the ones specs and unit tests use, are now the same bits
// on every machine; large ones keep BLAS's speed and its per-machine rounding.
// The price (BM_Mm/16 against /17): 0.72 us for a 16^3 product, which BLAS
// does in 0.36-0.45 us, dispatch included (1.6 us before the loop kept eight
// columns' sums in registers).

// Note [One thread pool for products]
// OpenBLAS's pthreads build (Debian's default) keeps a pool of its own: each
// thread spins on sched_yield for about 0.1 s after the library loads and
// after every threaded call, 0.13 s of a core in every opspec process, test
// binary and forked worker (whose pool the fork handler tears down and the
// next call rebuilds), while the OpenMP threads of the next op wait for that
// core. So OpenBLAS runs on the calling thread only (its pool is shut down
// as the library starts) and a product of at least kThreadedProduct
// multiply-adds is cut into a grid of blocks of C (See Note [Product block
// grids]), one BLAS call per block, on the OpenMP threads (parallel_rows): the
// one pool every kernel shares, sized by set_num_threads. The blocks depend
// on the shape alone, so the bits do not depend on the thread count. On the
// 2-core VM this is as fast as OpenBLAS's own threads (512^3: 1.38 ms
// against 1.49 ms; 1024^3: 11.1 ms against 11.2 ms).

constexpr int64_t kSmallProduct = 4096;   // See Note [Small matrix products]
constexpr int64_t kThreadedProduct = int64_t{1} << 21;  // 128^3; See Note [One thread pool for products]
constexpr int64_t kMaxProductBlocks = 8;  // See Note [Product block grids]
constexpr int64_t kMinBlockRows = 64;  // rows (or columns) of C in a block, a multiple of kBlockAlign
constexpr int64_t kBlockAlign = 16;    // rows of the widest sgemm micro-kernel

// Note [Product block grids]
// Every block of a threaded product is a BLAS call that packs its rows of
// op(A) and its columns of op(B) again, so a grid of rb x cb blocks packs A
// cb times and B rb times. Eight blocks of rows (the first grid here) packed
// a GPT-2 linear's weights eight times (sgemm_incopy was 15% of
// BM_Model/gpt2_block); of the grids with the most blocks (up to
// kMaxProductBlocks, each at least kMinBlockRows by kMinBlockRows), the one
// that packs the least elements is taken: 2 x 4 for [512, 256] x [256, 1024].
// The grid depends on the shape alone, so the bits do not depend on the
// thread count. They can differ from one call over all of C: how OpenBLAS
// rounds an element depends on its kernel and on where the element sits in
// a call. With the kernels of the VMs until 2026-11-27 the models' shapes
// gave one call's bits (only remainder kernels at ragged edges did not);
// with its Haswell kernels (the 2026-11-28 VM) rows split off at multiples
// of 12 do, and no split of the columns does. blas_threads_test checks the
// blocks land where one call puts them. BM_Model/gpt2_block 7.2 -> 6.7 ms,
// BM_Mm/512 1.41 -> 1.35 ms (the same binary with the old blocks, one sitting).

// OpenBLAS's own entry point, run by its fork handler: stops and joins its
// threads. Weak: absent from another BLAS, where nothing is shut down.
extern "C" void blas_thread_shutdown_(void) __attribute__((weak));

// single_threaded_blas: See Note [One thread pool for products].
[[maybe_unused]] const bool single_threaded_blas = [] {
  openblas_set_num_threads(1);
  if (blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
  return true;
}();

// BlasOperand: a [B, rows, cols] operand ready for gemm.
struct BlasOperand {
  Tensor holder;  // keeps a converted or contiguous copy alive
  const void* data = nullptr;
  int64_t batch_stride = 0;
  CBLAS_TRANSPOSE trans = CblasNoTrans;
  int64_t ld = 1;
};

// blas_layout: how BLAS can read a rows x cols matrix with strides (s0, s1)
// in row-major terms, or nullopt when neither stride is 1.
std::optional<std::pair<CBLAS_TRANSPOSE, int64_t>> blas_layout(int64_t rows, int64_t cols, int64_t s0, int64_t s1) {
  if ((s1 == 1 || cols == 1) && (rows == 1 || s0 >= std::max<int64_t>(1, cols))) {
    return std::make_pair(CblasNoTrans, rows == 1 ? std::max<int64_t>(1, cols) : s0);
  }
  if ((s0 == 1 || rows == 1) && (cols == 1 || s1 >= std::max<int64_t>(1, rows))) {
    return std::make_pair(CblasTrans, cols == 1 ? std::max<int64_t>(1, rows) : s1);
  }
  return std::nullopt;
}

// prepare: t ([B, rows, cols]) in dtype, laid out for BLAS.
BlasOperand prepare(const Tensor& t3, DType dtype, std::string_view op) {
  Tensor t = t3.dtype() == dtype ? t3 : contiguous_cpu(t3, dtype);
  const int64_t rows = t.sizes()[1], cols = t.sizes()[2];
  auto layout = blas_layout(rows, cols, t.strides()[1], t.strides()[2]);
  if (!layout) {
    t = contiguous_cpu(t);
    layout = blas_layout(rows, cols, t.strides()[1], t.strides()[2]);
    OPSPEC_INTERNAL_ASSERT(layout.has_value());
  }
  OPSPEC_CHECK(rows < INT_MAX && cols < INT_MAX && layout->second < INT_MAX, op, ": matrix of shape [", rows, ", ",
               cols, "] is too large for BLAS");
  return {t, t.raw_data(), t.strides()[0], layout->first, layout->second};
}

// as_batch: a [1, rows, cols] view of a matrix.
Tensor as_batch(const Tensor& m) {
  return make_view(m, {1, m.sizes()[0], m.sizes()[1]}, {0, m.strides()[0], m.strides()[1]}, m.storage_offset());
}

void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t n, int64_t m, int64_t k, double alpha, const float* a,
               int64_t lda, const float* b, int64_t ldb, double beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, static_cast<blasint>(n), static_cast<blasint>(m), static_cast<blasint>(k),
              static_cast<float>(alpha), a, static_cast<blasint>(lda), b, static_cast<blasint>(ldb),
              static_cast<float>(beta), c, static_cast<blasint>(ldc));
}
void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t n, int64_t m, int64_t k, double alpha,
               const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, static_cast<blasint>(n), static_cast<blasint>(m), static_cast<blasint>(k), alpha,
              a, static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

// product_block: the rows of one block of a threaded product of `extent`
// rows (mv's blocks): at most kMaxProductBlocks blocks of at least
// kMinBlockRows, aligned to kBlockAlign. The shape alone decides it.
int64_t product_block(int64_t extent) {
  const int64_t per = (extent + kMaxProductBlocks - 1) / kMaxProductBlocks;
  return std::max(kMinBlockRows, (per + kBlockAlign - 1) / kBlockAlign * kBlockAlign);
}

// BlockGrid: a threaded product's blocks: row_blocks x col_blocks blocks of
// `rows` rows and `cols` columns of C (the last ones smaller).
struct BlockGrid {
  int64_t row_blocks, col_blocks, rows, cols;
};

// block_grid: at most kMaxProductBlocks blocks of at least kMinBlockRows rows
// and columns, aligned to kBlockAlign; of the grids with the most blocks, the
// one that packs the least (See Note [Product block grids]). The shape alone
// decides it.
BlockGrid block_grid(int64_t n, int64_t m, int64_t k) {
  auto extent = [](int64_t total, int64_t blocks) {
    const int64_t per = (total + blocks - 1) / blocks;
    return (per + kBlockAlign - 1) / kBlockAlign * kBlockAlign;
  };
  BlockGrid best{1, 1, n, m};
  double best_cost = 0;
  for (int64_t rb = 1; rb <= kMaxProductBlocks; ++rb) {
    for (int64_t cb = 1; rb * cb <= kMaxProductBlocks; ++cb) {
      const int64_t rows = extent(n, rb), cols = extent(m, cb);
      if ((rb > 1 && rows < kMinBlockRows) || (cb > 1 && cols < kMinBlockRows)) continue;
      const int64_t row_blocks = (n + rows - 1) / rows, col_blocks = (m + cols - 1) / cols;
      // Each block packs its rows of op(A) and its columns of op(B).
      const double cost = static_cast<double>(col_blocks) * static_cast<double>(n * k) +
                          static_cast<double>(row_blocks) * static_cast<double>(k * m);
      const int64_t blocks = row_blocks * col_blocks, most = best.row_blocks * best.col_blocks;
      if (blocks > most || (blocks == most && cost < best_cost)) {
        best = {row_blocks, col_blocks, rows, cols};
        best_cost = cost;
      }
    }
  }
  return best;
}

// BlockHooks: what a product runs on each block of C (See Note [Matmul
// epilogues]): before its product (filling C's addend) and once it is final.
struct BlockHooks {
  MatrixBlockFn before, after;
};

// blocked_blas_gemm: blas_gemm in a grid of blocks of C (block_grid), run on
// the OpenMP threads, with hooks around each block when given. See Note [One
// thread pool for products].
template <class T>
void blocked_blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t n, int64_t m, int64_t k, double alpha,
                       const T* a, int64_t lda, const T* b, int64_t ldb, double beta, T* c, bool parallel,
                       const BlockHooks* hooks) {
  const BlockGrid grid = block_grid(n, m, k);
  parallel_rows(grid.row_blocks * grid.col_blocks, parallel, [&](int64_t i) {
    const int64_t r0 = (i / grid.col_blocks) * grid.rows, c0 = (i % grid.col_blocks) * grid.cols;
    const int64_t nr = std::min(grid.rows, n - r0), nc = std::min(grid.cols, m - c0);
    if (hooks != nullptr) hooks->before({r0, nr, c0, nc});
    // Row r of op(A) is row r of A, or column r of A when transposed; column c of op(B) likewise.
    const T* ab = ta == CblasNoTrans ? a + r0 * lda : a + r0;
    const T* bb = tb == CblasNoTrans ? b + c0 : b + c0 * ldb;
    blas_gemm(ta, tb, nr, nc, k, alpha, ab, lda, bb, ldb, beta, c + r0 * m + c0, m);
    if (hooks != nullptr) hooks->after({r0, nr, c0, nc});
  });
}

// small_gemm: blas_gemm's product summed in k order, each element on its own.
// See Note [Small matrix products].
template <class T>
void small_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t n, int64_t m, int64_t k, T alpha, const T* a,
                int64_t lda, const T* b, int64_t ldb, T beta, T* c) {
  // Rows of B contiguous, so the inner loop vectorizes across j (every
  // element still sums in k order: no reassociation, no contraction).
  std::vector<T> packed;
  if (tb != CblasNoTrans) {
    packed.resize(static_cast<size_t>(k * m));
    for (int64_t j = 0; j < m; ++j) {
      for (int64_t kk = 0; kk < k; ++kk) packed[kk * m + j] = b[j * ldb + kk];
    }
    b = packed.data();
    ldb = m;
  }
  // Eight columns at a time with a fixed count, so the sums stay in registers
  // (the runtime-width loop below kept them in memory: 3x the instructions
  // of an 8x8 product); the rest of each row takes the general loop.
  constexpr int64_t kLanes = 8;
  const int64_t lane_cols = m - m % kLanes;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j0 = 0; j0 < lane_cols; j0 += kLanes) {
      T lane[kLanes] = {};
      for (int64_t kk = 0; kk < k; ++kk) {
        const T av = ta == CblasNoTrans ? a[i * lda + kk] : a[kk * lda + i];
        const T* brow = b + kk * ldb + j0;
        for (int64_t j = 0; j < kLanes; ++j) lane[j] += av * brow[j];
      }
      T* crow = c + i * m + j0;
      for (int64_t j = 0; j < kLanes; ++j) {
        crow[j] = beta != T(0) ? alpha * lane[j] + beta * crow[j] : alpha * lane[j];
      }
    }
  }
  if (lane_cols == m) return;
  constexpr int64_t kWidth = 64;  // columns accumulated at once
  T acc[kWidth];
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j0 = lane_cols; j0 < m; j0 += kWidth) {
      const int64_t width = std::min(kWidth, m - j0);
      std::fill(acc, acc + width, T(0));
      for (int64_t kk = 0; kk < k; ++kk) {
        const T av = ta == CblasNoTrans ? a[i * lda + kk] : a[kk * lda + i];
        const T* brow = b + kk * ldb + j0;
        OPSPEC_SIMD
        for (int64_t j = 0; j < width; ++j) acc[j] += av * brow[j];
      }
      T* crow = c + i * m + j0;
      for (int64_t j = 0; j < width; ++j) crow[j] = beta != T(0) ? alpha * acc[j] + beta * crow[j] : alpha * acc[j];
    }
  }
}

// product: c (row-major [n, m]) = alpha * op(a) @ op(b) + beta * c, with c's old
// contents ignored when beta is 0, as BLAS does.
// Products of kThreadedProduct or more are blocked, on the OpenMP threads when parallel.
// With hooks, C is one block unless the product is blocked.
template <class T>
void product(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t n, int64_t m, int64_t k, double alpha, const T* a,
             int64_t lda, const T* b, int64_t ldb, double beta, T* c, bool parallel,
             const BlockHooks* hooks = nullptr) {
  if (n * m * k >= kThreadedProduct) return blocked_blas_gemm<T>(ta, tb, n, m, k, alpha, a, lda, b, ldb, beta, c, parallel, hooks);
  if (hooks != nullptr) hooks->before({0, n, 0, m});
  if (n * m * k <= kSmallProduct) {
    small_gemm<T>(ta, tb, n, m, k, static_cast<T>(alpha), a, lda, b, ldb, static_cast<T>(beta), c);
  } else {
    blas_gemm(ta, tb, n, m, k, alpha, a, lda, b, ldb, beta, c, m);
  }
  if (hooks != nullptr) hooks->after({0, n, 0, m});
}

// blas_matmul: c (contiguous [B, n, m], f32 or f64) = alpha * a @ b + beta * c,
// with c's old contents ignored when !accumulate.
template <class T>
void blas_matmul(const Tensor& a, const Tensor& b, const Tensor& c, double alpha, double beta, bool accumulate,
                 std::string_view op) {
  const int64_t batches = c.sizes()[0], n = c.sizes()[1], m = c.sizes()[2], k = a.sizes()[2];
  T* cp = c.data_ptr<T>();
  if (k == 0) {  // an empty sum: only the beta term remains
    for (int64_t i = 0; i < c.numel(); ++i) cp[i] = accumulate && beta != 0 ? static_cast<T>(beta * cp[i]) : T(0);
    return;
  }
  OPSPEC_CHECK(k < INT_MAX && m < INT_MAX, op, ": matrices too large for BLAS");
  const BlasOperand pa = prepare(a, dtype_of<T>(), op);
  const BlasOperand pb = prepare(b, dtype_of<T>(), op);
  // Threads take whole batches when there are enough of them (each product
  // then blocked, if at all, on its own thread), else the blocks of each.
  const int64_t threads = get_num_threads(), work = n * m * k;
  const bool by_batch = batches >= threads && batches * work >= kThreadedProduct;
  parallel_rows(batches, by_batch && threads > 1, [&](int64_t i) {
    product<T>(pa.trans, pb.trans, n, m, k, alpha, static_cast<const T*>(pa.data) + i * pa.batch_stride, pa.ld,
               static_cast<const T*>(pb.data) + i * pb.batch_stride, pb.ld, accumulate ? beta : 0.0, cp + i * n * m,
               /*parallel=*/!by_batch && threads > 1);
  });
}

// int_matmul: the integer product with wrapping uint64 accumulation.
template <class T>
void int_matmul(const Tensor& a3, const Tensor& b3, const Tensor& c, int64_t alpha, int64_t beta, bool accumulate) {
  const int64_t batches = c.sizes()[0], n = c.sizes()[1], m = c.sizes()[2], k = a3.sizes()[2];
  const Tensor a = contiguous_cpu(a3), b = contiguous_cpu(b3);
  const T* ap = static_cast<const T*>(a.raw_data());
  const T* bp = static_cast<const T*>(b.raw_data());
  T* cp = c.data_ptr<T>();
  const auto ua = static_cast<uint64_t>(alpha), ub = static_cast<uint64_t>(beta);
  parallel_rows_with(
      batches * n, batches * n * m * std::max<int64_t>(k, 1) >= kParallelGrain,
      [&] { return std::vector<uint64_t>(static_cast<size_t>(m)); },
      [&](int64_t row, std::vector<uint64_t>& acc) {
        const int64_t bi = row / n, i = row % n;
        std::fill(acc.begin(), acc.end(), uint64_t{0});
        const T* arow = ap + (bi * n + i) * k;
        const T* bmat = bp + bi * k * m;
        for (int64_t kk = 0; kk < k; ++kk) {
          const auto av = static_cast<uint64_t>(static_cast<int64_t>(arow[kk]));
          const T* brow = bmat + kk * m;
          for (int64_t j = 0; j < m; ++j) acc[j] += av * static_cast<uint64_t>(static_cast<int64_t>(brow[j]));
        }
        T* crow = cp + (bi * n + i) * m;
        for (int64_t j = 0; j < m; ++j) {
          uint64_t v = ua * acc[j];
          if (accumulate && beta != 0) v += ub * static_cast<uint64_t>(static_cast<int64_t>(crow[j]));
          crow[j] = static_cast<T>(v);
        }
      });
}

// matmul_into: c = alpha * a @ b (+ beta * c when accumulate), for a [B, n, k], b [B, k, m] and a
// fresh contiguous c [B, n, m] that already holds the addend when accumulate.
void matmul_into(const Tensor& a, const Tensor& b, const Tensor& c, const Scalar& alpha, const Scalar& beta,
                 bool accumulate, std::string_view op) {
  if (c.numel() == 0) return;
  switch (c.dtype()) {
    case DType::kFloat32:
      return blas_matmul<float>(a, b, c, alpha.to_double(), beta.to_double(), accumulate, op);
    case DType::kFloat64:
      return blas_matmul<double>(a, b, c, alpha.to_double(), beta.to_double(), accumulate, op);
    case DType::kFloat16:
    case DType::kBFloat16: {
      // Widen to f32, multiply with float accumulation, round once.
      Tensor tmp = make_tensor(c.sizes(), DType::kFloat32, kCPU);
      if (accumulate) copy_into(tmp, c);
      blas_matmul<float>(a, b, tmp, alpha.to_double(), beta.to_double(), accumulate, op);
      copy_into(c, tmp);
      return;
    }
    case DType::kInt64:
      return int_matmul<int64_t>(a, b, c, alpha.to_int(), beta.to_int(), accumulate);
    case DType::kInt32:
      return int_matmul<int32_t>(a, b, c, alpha.to_int(), beta.to_int(), accumulate);
    case DType::kBool:
      break;
  }
  OPSPEC_FAIL(op, ": \"addmm_impl_cpu_\" not implemented for 'Bool'");
}

}  // namespace

// gemm_in_place: c = a @ b by one gemm on the 2-D operands when BLAS can read
// both where they are (the call blas_matmul would make for a batch of one,
// without building [1, n, k] views: on 8x8 matrices those cost a quarter of
// the product). False, with nothing done, otherwise.
template <class T>
bool gemm_in_place(const Tensor& a, const Tensor& b, const Tensor& c) {
  const int64_t n = a.sizes()[0], k = a.sizes()[1], m = b.sizes()[1];
  if (a.dtype() != dtype_of<T>() || b.dtype() != dtype_of<T>() || n == 0 || m == 0 || k == 0) return false;
  const auto la = blas_layout(n, k, a.strides()[0], a.strides()[1]);
  const auto lb = blas_layout(k, m, b.strides()[0], b.strides()[1]);
  if (!la || !lb || n >= INT_MAX || k >= INT_MAX || m >= INT_MAX || la->second >= INT_MAX || lb->second >= INT_MAX) {
    return false;
  }
  product<T>(la->first, lb->first, n, m, k, 1.0, static_cast<const T*>(a.raw_data()), la->second,
             static_cast<const T*>(b.raw_data()), lb->second, 0.0, c.data_ptr<T>(), /*parallel=*/get_num_threads() > 1);
  return true;
}

Tensor mm_cpu(const Tensor& self, const Tensor& mat2) {
  const SizeVec shape = mm_shape(self, mat2, "aten::mm");
  Tensor out = make_tensor(shape, self.dtype(), kCPU);
  if (gemm_in_place<float>(self, mat2, out) || gemm_in_place<double>(self, mat2, out)) return out;
  matmul_into(as_batch(self), as_batch(mat2), as_batch(out), 1, 0, /*accumulate=*/false, "aten::mm");
  return out;
}

Tensor bmm_cpu(const Tensor& self, const Tensor& mat2) {
  const SizeVec shape = bmm_shape(self, mat2);
  Tensor out = make_tensor(shape, self.dtype(), kCPU);
  matmul_into(self, mat2, out, 1, 0, /*accumulate=*/false, "aten::bmm");
  return out;
}

Tensor addmm_cpu(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
  const SizeVec shape = addmm_shape(self, mat1, mat2);
  if (!is_floating(mat1.dtype())) {
    OPSPEC_CHECK(!beta.is_floating_point() && !alpha.is_floating_point(),
                 "aten::addmm: For integral input tensors, argument ", beta.is_floating_point() ? "beta" : "alpha",
                 " must not be a floating point number.");
  }
  Tensor out = make_tensor(shape, mat1.dtype(), kCPU);
  // beta == 0 ignores self entirely (NaN and inf included), as BLAS does.
  const bool accumulate = beta.to_double() != 0;
  if (accumulate) copy_into(out, self);
  matmul_into(as_batch(mat1), as_batch(mat2), as_batch(out), alpha, beta, accumulate, "aten::addmm");
  return out;
}

// linear_blocks_cpu: See LinearBlocksFn in matmul_epilogue.h. The calls are
// addmm_cpu's (bias) or mm_cpu's (no bias) for linear's 2-D product: the
// same operands prepared the same way, the same product() with the same
// alpha and beta, so the same BLAS calls on the same blocks. Only where the
// addend is written differs: addmm_cpu copies the bias into all of C first;
// here each block gets its rows of it just before its product.
bool linear_blocks_cpu(const Tensor& out, const Tensor& input, const Tensor& weight, const Tensor* bias,
                       absl::FunctionRef<void()> start, MatrixBlockFn done) {
  const DType dtype = out.dtype();
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64) return false;
  if (input.dtype() != dtype || weight.dtype() != dtype || (bias != nullptr && bias->dtype() != dtype)) return false;
  if (weight.dim() != 2 || input.dim() < 2 || !out.is_contiguous() || out.dim() != 2) return false;
  // linear folds the leading dims of a contiguous input only (a view); 2-D inputs go as they are.
  if (input.dim() > 2 && !input.is_contiguous()) return false;
  const int64_t k = input.size(-1), n = input.numel() / std::max<int64_t>(k, 1), m = weight.size(0);
  if (k == 0 || n == 0 || m == 0 || weight.size(1) != k || out.size(0) != n || out.size(1) != m) return false;
  if (bias != nullptr && (bias->dim() != 1 || bias->size(0) != m || !bias->is_contiguous())) return false;
  const Tensor a = input.dim() == 2 ? input : make_view(input, {n, k}, {k, 1}, input.storage_offset());
  // weight.t(): [k, m] with the weight's strides swapped.
  const Tensor bt = make_view(weight, {k, m}, {weight.stride(1), weight.stride(0)}, weight.storage_offset());
  OPSPEC_CHECK(k < INT_MAX && m < INT_MAX, "aten::linear: matrices too large for BLAS");
  const BlasOperand pa = prepare(as_batch(a), dtype, "aten::linear");
  const BlasOperand pb = prepare(as_batch(bt), dtype, "aten::linear");
  start();
  auto run = [&]<class T>(T*) {
    T* c = out.data_ptr<T>();
    const T* bv = bias != nullptr ? bias->data_ptr<T>() : nullptr;
    auto fill = [&](const MatrixBlock& blk) {
      if (bv == nullptr) return;
      for (int64_t r = blk.row0; r < blk.row0 + blk.rows; ++r) {
        std::copy(bv + blk.col0, bv + blk.col0 + blk.cols, c + r * m + blk.col0);
      }
    };
    const BlockHooks hooks{fill, done};
    product<T>(pa.trans, pb.trans, n, m, k, 1.0, static_cast<const T*>(pa.data), pa.ld,
               static_cast<const T*>(pb.data), pb.ld, bv != nullptr ? 1.0 : 0.0, c,
               /*parallel=*/get_num_threads() > 1, &hooks);
  };
  if (dtype == DType::kFloat32) {
    run(static_cast<float*>(nullptr));
  } else {
    run(static_cast<double*>(nullptr));
  }
  return true;
}

Tensor dot_cpu(const Tensor& self, const Tensor& tensor) {
  dot_shape(self, tensor);
  Tensor out = make_tensor({}, self.dtype(), kCPU);
  const int64_t k = self.numel();
  if ((self.dtype() == DType::kFloat32 || self.dtype() == DType::kFloat64) && k > kSmallProduct) {
    // BLAS dot on the strided vectors directly when their strides are positive.
    const Tensor x = self.stride(0) > 0 ? self : contiguous_cpu(self);
    const Tensor y = tensor.stride(0) > 0 ? tensor : contiguous_cpu(tensor);
    OPSPEC_CHECK(k < INT_MAX && x.stride(0) < INT_MAX && y.stride(0) < INT_MAX, "aten::dot: vectors too large for BLAS");
    const auto n = static_cast<blasint>(k);
    const auto incx = static_cast<blasint>(x.stride(0)), incy = static_cast<blasint>(y.stride(0));
    if (self.dtype() == DType::kFloat32) {
      *out.data_ptr<float>() = k == 0 ? 0.f
                                      : cblas_sdot(n, static_cast<const float*>(x.raw_data()), incx,
                                                   static_cast<const float*>(y.raw_data()), incy);
    } else {
      *out.data_ptr<double>() = k == 0 ? 0.0
                                       : cblas_ddot(n, static_cast<const double*>(x.raw_data()), incx,
                                                    static_cast<const double*>(y.raw_data()), incy);
    }
    return out;
  }
  // [1, 1, k] @ [1, k, 1] through the general path.
  const Tensor a = make_view(self, {1, 1, k}, {0, 0, self.stride(0)}, self.storage_offset());
  const Tensor b = make_view(tensor, {1, k, 1}, {0, tensor.stride(0), 1}, tensor.storage_offset());
  matmul_into(a, b, make_view(out, {1, 1, 1}, {1, 1, 1}, 0), 1, 0, /*accumulate=*/false, "aten::dot");
  return out;
}

Tensor mv_cpu(const Tensor& self, const Tensor& vec) {
  const SizeVec shape = mv_shape(self, vec);
  Tensor out = make_tensor(shape, self.dtype(), kCPU);
  const int64_t n = self.sizes()[0], k = self.sizes()[1];
  if (n == 0) return out;
  if (n * k > kSmallProduct && (self.dtype() == DType::kFloat32 || self.dtype() == DType::kFloat64)) {
    auto layout = blas_layout(n, k, self.strides()[0], self.strides()[1]);
    const Tensor a = layout ? self : contiguous_cpu(self);
    if (!layout) layout = blas_layout(n, k, a.strides()[0], a.strides()[1]);
    const Tensor x = vec.stride(0) > 0 ? vec : contiguous_cpu(vec);
    OPSPEC_CHECK(n < INT_MAX && k < INT_MAX && layout->second < INT_MAX && x.stride(0) < INT_MAX,
                 "aten::mv: matrix too large for BLAS");
    // Row-major gemv takes the stored matrix: [n, k] as is, or [k, n] transposed.
    // Large ones go in blocks of outputs on the OpenMP threads (See Note [One thread pool for products]).
    const bool trans = layout->first == CblasTrans;
    const auto lda = static_cast<blasint>(layout->second), incx = static_cast<blasint>(x.stride(0));
    const int64_t rows = n * k >= kThreadedProduct ? product_block(n) : n, blocks = (n + rows - 1) / rows;
    parallel_rows(blocks, blocks > 1 && get_num_threads() > 1, [&](int64_t i) {
      const int64_t r0 = i * rows, nr = std::min(rows, n - r0);
      // Output r is row r of the stored [n, k] matrix, or its column r when stored [k, n].
      const int64_t offset = trans ? r0 : r0 * layout->second;
      const auto srows = static_cast<blasint>(trans ? k : nr), scols = static_cast<blasint>(trans ? nr : k);
      if (self.dtype() == DType::kFloat32) {
        cblas_sgemv(CblasRowMajor, layout->first, srows, scols, 1.f, static_cast<const float*>(a.raw_data()) + offset,
                    lda, static_cast<const float*>(x.raw_data()), incx, 0.f, out.data_ptr<float>() + r0, 1);
      } else {
        cblas_dgemv(CblasRowMajor, layout->first, srows, scols, 1.0, static_cast<const double*>(a.raw_data()) + offset,
                    lda, static_cast<const double*>(x.raw_data()), incx, 0.0, out.data_ptr<double>() + r0, 1);
      }
    });
    return out;
  }
  const Tensor b = make_view(vec, {1, k, 1}, {0, vec.stride(0), 1}, vec.storage_offset());
  matmul_into(as_batch(self), b, make_view(out, {1, n, 1}, {0, 1, 1}, 0), 1, 0, /*accumulate=*/false, "aten::mv");
  return out;
}

}  // namespace opspec::internal
