#include "kernels/cpu/loops.h"
#include "runtime/core/parallel.h"

#include <algorithm>
#include <atomic>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace opspec::internal {

// Note [parallel_for chunks]
// Work is cut into up to kChunksPerThread contiguous chunks per thread, which
// threads claim in order from a shared counter, rather than one equal slice
// per thread: on a machine shared with other processes a thread that is
// descheduled would otherwise hold up the whole op while its sibling waits at
// the barrier. Chunks keep at least `grain` elements, start at multiples of
// kChunkAlign (whole cache lines and vectors for any dtype) and cost one
// atomic add each; what runs where never changes a result.
void parallel_for(int64_t n, int64_t grain, absl::FunctionRef<void(int64_t, int64_t)> f) {
  if (n <= 0) return;
#ifdef _OPENMP
  if (n >= grain && !omp_in_parallel()) {
    const int64_t max_threads = get_num_threads();
    const int64_t nt = std::min<int64_t>(max_threads, (n + grain - 1) / std::max<int64_t>(grain, 1));
    if (nt > 1) {
      constexpr int64_t kChunksPerThread = 4, kChunkAlign = 64;
      int64_t chunk = std::max<int64_t>(grain, (n + nt * kChunksPerThread - 1) / (nt * kChunksPerThread));
      chunk = (chunk + kChunkAlign - 1) / kChunkAlign * kChunkAlign;
      const int64_t nchunks = (n + chunk - 1) / chunk;
      std::atomic<int64_t> next{0};
#pragma omp parallel num_threads(static_cast<int>(nt))
      {
        for (int64_t c = next.fetch_add(1, std::memory_order_relaxed); c < nchunks;
             c = next.fetch_add(1, std::memory_order_relaxed)) {
          f(c * chunk, std::min(n, (c + 1) * chunk));
        }
      }
      return;
    }
  }
#endif
  f(0, n);
}

void require_cpu_device(Device device, std::string_view op) {
  if (!device.is_cpu()) {
    throw_not_implemented(str_cat(op, ": no CPU kernel for tensors on ", device.str()));
  }
}

namespace {

struct IterDim {
  int64_t size;
  std::array<int64_t, kMaxIterOperands> stride;
};

}  // namespace

TensorIterator::TensorIterator(const Tensor& out, TensorList inputs) {
  ntensors_ = 1 + static_cast<int>(inputs.size());
  OPSPEC_INTERNAL_ASSERT(ntensors_ <= kMaxIterOperands);
  numel_ = out.numel();
  std::array<int64_t, kMaxIterOperands> elsize{};
  data_[0] = static_cast<char*>(out.raw_data());
  elsize[0] = out.element_size();
  for (size_t k = 0; k < inputs.size(); ++k) {
    data_[k + 1] = static_cast<char*>(inputs[k].raw_data());
    elsize[k + 1] = inputs[k].element_size();
  }

  // Flat fast path: everything contiguous with the output's exact sizes.
  bool flat = out.is_contiguous();
  for (const Tensor& t : inputs) {
    flat = flat && t.is_contiguous() &&
           std::equal(t.sizes().begin(), t.sizes().end(), out.sizes().begin(), out.sizes().end());
  }
  if (flat || numel_ <= 1) {
    shape_ = {numel_};
    for (int k = 0; k < ntensors_; ++k) strides_[k] = {elsize[k]};
    return;
  }

  // Byte strides per output dim; broadcast dims and size-1 dims get stride 0
  // and size-1 dims are dropped.
  const int64_t nd = out.dim();
  absl::InlinedVector<IterDim, 6> dims;
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t size = out.sizes()[d];
    if (size == 1) continue;
    IterDim dim{size, {}};
    dim.stride[0] = out.strides()[d] * elsize[0];
    for (size_t k = 0; k < inputs.size(); ++k) {
      const Tensor& t = inputs[k];
      const int64_t lead = nd - t.dim();
      OPSPEC_INTERNAL_ASSERT(lead >= 0);
      int64_t s = 0;
      if (d >= lead) {
        const int64_t tsize = t.sizes()[d - lead];
        OPSPEC_INTERNAL_ASSERT(tsize == size || tsize == 1);
        if (tsize != 1) s = t.strides()[d - lead] * elsize[k + 1];
      }
      dim.stride[k + 1] = s;
    }
    dims.push_back(dim);
  }

  // Order dims by decreasing output stride (stable: ties keep their order), so
  // the innermost loop walks the output's memory in order.
  for (size_t i = 1; i < dims.size(); ++i) {
    IterDim cur = dims[i];
    size_t j = i;
    while (j > 0 && dims[j - 1].stride[0] < cur.stride[0]) {
      dims[j] = dims[j - 1];
      --j;
    }
    dims[j] = cur;
  }

  // Coalesce an outer dim into the inner one when every operand steps over
  // the outer dim exactly as far as the whole inner dim.
  absl::InlinedVector<IterDim, 6> merged;
  for (const IterDim& dim : dims) {
    if (!merged.empty()) {
      IterDim& outer = merged.back();
      bool can_merge = true;
      for (int k = 0; k < ntensors_; ++k) can_merge = can_merge && outer.stride[k] == dim.stride[k] * dim.size;
      if (can_merge) {
        outer.size *= dim.size;
        outer.stride = dim.stride;
        continue;
      }
    }
    merged.push_back(dim);
  }
  OPSPEC_INTERNAL_ASSERT(!merged.empty());
  shape_.clear();
  for (int k = 0; k < ntensors_; ++k) strides_[k].clear();
  for (const IterDim& dim : merged) {
    shape_.push_back(dim.size);
    for (int k = 0; k < ntensors_; ++k) strides_[k].push_back(dim.stride[k]);
  }
}

void TensorIterator::serial_for_each(LoopFn loop, int64_t begin, int64_t end) const {
  if (begin >= end) return;
  const int nd = ndim();
  const int64_t inner = shape_[nd - 1];
  int64_t strides[2 * kMaxIterOperands];
  char* ptrs[kMaxIterOperands];
  for (int k = 0; k < ntensors_; ++k) {
    strides[k] = strides_[k][nd - 1];
    strides[ntensors_ + k] = nd >= 2 ? strides_[k][nd - 2] : 0;
  }
  if (nd == 1) {
    for (int k = 0; k < ntensors_; ++k) ptrs[k] = data_[k] + begin * strides[k];
    loop(ptrs, strides, end - begin, 1);
    return;
  }
  SizeVec idx(static_cast<size_t>(nd), 0);
  int64_t linear = begin;
  for (int d = nd - 1; d >= 0; --d) {
    idx[d] = linear % shape_[d];
    linear /= shape_[d];
  }
  while (begin < end) {
    for (int k = 0; k < ntensors_; ++k) {
      int64_t off = 0;
      for (int d = 0; d < nd; ++d) off += idx[d] * strides_[k][d];
      ptrs[k] = data_[k] + off;
    }
    if (idx[nd - 1] == 0 && end - begin >= inner) {
      // Whole rows: as many as remain in this block of the second-innermost dim.
      const int64_t m = std::min((end - begin) / inner, shape_[nd - 2] - idx[nd - 2]);
      loop(ptrs, strides, inner, m);
      begin += m * inner;
      idx[nd - 2] += m;
      if (idx[nd - 2] < shape_[nd - 2]) continue;
      idx[nd - 2] = 0;
      for (int d = nd - 3; d >= 0; --d) {
        if (++idx[d] < shape_[d]) break;
        idx[d] = 0;
      }
      continue;
    }
    const int64_t n = std::min(inner - idx[nd - 1], end - begin);
    loop(ptrs, strides, n, 1);
    begin += n;
    idx[nd - 1] += n;
    if (idx[nd - 1] == inner) {
      idx[nd - 1] = 0;
      for (int d = nd - 2; d >= 0; --d) {
        if (++idx[d] < shape_[d]) break;
        idx[d] = 0;
      }
    }
  }
}

bool TensorIterator::wants_tiling() const {
  const int nd = ndim();
  if (nd < 2 || shape_[nd - 1] < kTileSize || shape_[nd - 2] < kTileSize) return false;
  for (int k = 1; k < ntensors_; ++k) {
    const int64_t row = std::abs(strides_[k][nd - 2]), col = std::abs(strides_[k][nd - 1]);
    if (row != 0 && col != 0 && row < col) return true;
  }
  return false;
}

void TensorIterator::tiled_for_each(LoopFn loop, int64_t grain) const {
  const int nd = ndim();
  const int64_t rows = shape_[nd - 2], cols = shape_[nd - 1];
  const int64_t row_tiles = (rows + kTileSize - 1) / kTileSize, col_tiles = (cols + kTileSize - 1) / kTileSize;
  const int64_t tiles_per_matrix = row_tiles * col_tiles;
  const int64_t tasks = numel_ / (rows * cols) * tiles_per_matrix;
  parallel_for(tasks, std::max<int64_t>(1, grain / (kTileSize * kTileSize)), [&](int64_t begin, int64_t end) {
    int64_t strides[2 * kMaxIterOperands];
    char* ptrs[kMaxIterOperands];
    int64_t base[kMaxIterOperands];
    for (int k = 0; k < ntensors_; ++k) {
      strides[k] = strides_[k][nd - 1];
      strides[ntensors_ + k] = strides_[k][nd - 2];
    }
    // Unravel the first task once, then step (col tile, row tile, matrix)
    // like an odometer: no divisions per tile.
    int64_t matrix = begin / tiles_per_matrix;
    int64_t tr = begin % tiles_per_matrix / col_tiles, tc = begin % col_tiles;
    auto matrix_base = [&](int64_t mi) {
      for (int k = 0; k < ntensors_; ++k) base[k] = 0;
      for (int d = nd - 3; d >= 0; --d) {
        const int64_t i = mi % shape_[d];
        mi /= shape_[d];
        for (int k = 0; k < ntensors_; ++k) base[k] += i * strides_[k][d];
      }
    };
    matrix_base(matrix);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t r0 = tr * kTileSize, c0 = tc * kTileSize;
      for (int k = 0; k < ntensors_; ++k) {
        ptrs[k] = data_[k] + base[k] + r0 * strides[ntensors_ + k] + c0 * strides[k];
      }
      loop(ptrs, strides, std::min(kTileSize, cols - c0), std::min(kTileSize, rows - r0));
      if (++tc == col_tiles) {
        tc = 0;
        if (++tr == row_tiles) {
          tr = 0;
          matrix_base(++matrix);
        }
      }
    }
  });
}

void TensorIterator::for_each(LoopFn loop, int64_t grain) const {
  if (numel_ == 0) return;
  if (wants_tiling()) return tiled_for_each(loop, grain);
  parallel_for(numel_, grain, [&](int64_t begin, int64_t end) { serial_for_each(loop, begin, end); });
}

}  // namespace opspec::internal
