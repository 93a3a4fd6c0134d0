#include "kernels/cuda/elementwise_args.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

#include "kernels/cuda/cuda_device.h"
#include "runtime/ops/untraced.h"

namespace opspec::internal::cuda {

uint64_t scalar_bits(const Tensor& cpu_scalar, DType dtype) {
  OPSPEC_INTERNAL_ASSERT(cpu_scalar.numel() == 1 && cpu_scalar.device().is_cpu());
  Tensor converted = make_tensor({}, dtype, kCPU);
  copy_untraced(converted, cpu_scalar.dim() == 0 ? cpu_scalar : make_view(cpu_scalar, {}, {}, cpu_scalar.storage_offset()));
  uint64_t bits = 0;
  std::memcpy(&bits, converted.raw_data(), static_cast<size_t>(converted.element_size()));
  return bits;
}

ElementwiseArgs make_args(const Tensor& out, std::initializer_list<Tensor> inputs,
                          std::initializer_list<DType> storage) {
  OPSPEC_INTERNAL_ASSERT(inputs.size() == storage.size() && inputs.size() + 1 <= kMaxOperands);
  ElementwiseArgs a;
  a.ntensors = static_cast<int>(inputs.size()) + 1;
  a.numel = out.numel();
  const int64_t nd = out.dim();
  // Per operand, element strides over out's dims (0 where broadcast).
  struct Dim {
    int64_t size;
    std::array<int64_t, kMaxOperands> stride;
  };
  absl::InlinedVector<Dim, 8> dims(static_cast<size_t>(nd));
  for (int64_t d = 0; d < nd; ++d) {
    dims[d].size = out.sizes()[d];
    dims[d].stride.fill(0);
    dims[d].stride[0] = out.strides()[d];
  }
  a.data[0] = out.raw_data();
  a.code[0] = code_of(out.dtype());
  int k = 1;
  auto st = storage.begin();
  for (const Tensor& t : inputs) {
    a.code[k] = code_of(t.dtype());
    if (t.device().is_cpu()) {
      // A scalar: the kernel reads its value from the launch, already converted.
      a.data[k] = nullptr;
      a.scalar[k] = scalar_bits(t, *st);
      a.code[k] = code_of(*st);
    } else {
      a.data[k] = t.raw_data();
      const int64_t offset = nd - t.dim();
      for (int64_t d = 0; d < t.dim(); ++d) {
        dims[offset + d].stride[k] = t.sizes()[d] == 1 ? 0 : t.strides()[d];
      }
    }
    ++k;
    ++st;
  }
  // Drop size-1 dims; order the rest so the output's strides decrease (the
  // innermost dim, walked by neighbouring threads, has the smallest), then
  // merge neighbours every operand steps over contiguously.
  dims.erase(std::remove_if(dims.begin(), dims.end(), [](const Dim& d) { return d.size == 1; }), dims.end());
  std::stable_sort(dims.begin(), dims.end(), [](const Dim& x, const Dim& y) { return x.stride[0] > y.stride[0]; });
  absl::InlinedVector<Dim, 8> merged;
  for (const Dim& d : dims) {
    if (!merged.empty()) {
      Dim& outer = merged.back();
      bool can = true;
      for (int j = 0; j < a.ntensors; ++j) can &= outer.stride[j] == d.stride[j] * d.size;
      if (can) {
        outer.size *= d.size;
        outer.stride = d.stride;
        continue;
      }
    }
    merged.push_back(d);
  }
  if (static_cast<int>(merged.size()) > kMaxDims) {
    throw_not_implemented(str_cat("CUDA elementwise kernels take at most ", kMaxDims, " dims after coalescing; got ",
                                  merged.size(), " for an output of shape ", format_sizes(out.sizes())));
  }
  a.ndim = static_cast<int>(merged.size());
  a.contiguous = a.ndim <= 1;
  a.index32 = a.numel <= std::numeric_limits<int32_t>::max();
  for (int d = 0; d < a.ndim; ++d) {
    a.sizes[d] = merged[d].size;
    for (int j = 0; j < a.ntensors; ++j) {
      a.strides[j][d] = merged[d].stride[j];
      if (a.data[j] != nullptr && merged[d].stride[j] != 1) a.contiguous = false;
    }
  }
  for (int j = 0; j < a.ntensors && a.index32; ++j) {
    int64_t extent = 0;
    for (int d = 0; d < a.ndim; ++d) extent += (a.sizes[d] - 1) * a.strides[j][d];
    a.index32 = extent <= std::numeric_limits<int32_t>::max();
  }
  return a;
}

}  // namespace opspec::internal::cuda
