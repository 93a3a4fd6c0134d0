// factory.cc: CPU kernels of the deterministic factories (empty, zeros, ones,
// full, scalar_tensor, arange, *_like) and the in-place fills fill_ and zero_.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/common/factory_meta.h"
#include "kernels/common/scalar_as.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/parallel_rows.h"
#include "runtime/core/memory_format.h"

namespace opspec::internal {

namespace {

template <class T> void fill_contiguous(T* data, int64_t n, T v) {
  parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) data[i] = v;
  });
}

// fill_strided: any geometry, overlapping (expanded) tensors included; an
// odometer walks the dims with the last one innermost.
template <class T> void fill_strided(const Tensor& t, T v) {
  T* base = static_cast<T*>(t.raw_data());
  const int64_t nd = t.dim();
  const int64_t n = t.numel();
  if (n == 0) return;
  if (nd == 0) {
    *base = v;
    return;
  }
  const int64_t inner = t.sizes()[nd - 1], inner_stride = t.strides()[nd - 1];
  SizeVec idx(static_cast<size_t>(nd), 0);
  for (int64_t done = 0; done < n; done += inner) {
    int64_t off = 0;
    for (int64_t d = 0; d < nd - 1; ++d) off += idx[d] * t.strides()[d];
    T* row = base + off;
    for (int64_t i = 0; i < inner; ++i) row[i * inner_stride] = v;
    for (int64_t d = nd - 2; d >= 0; --d) {
      if (++idx[d] < t.sizes()[d]) break;
      idx[d] = 0;
    }
  }
}

// fill_tensor: t[...] = value converted to t's dtype. A non-overlapping and
// dense t (a channels-last or permuted *_like result) owns exactly the numel
// elements from its first one, so the flat fill covers it.
void fill_tensor(const Tensor& t, const Scalar& value, std::string_view op) {
  OPSPEC_DISPATCH_ALL_DTYPES(t.dtype(), op, [&] {
    const scalar_t v = checked_scalar_cast<scalar_t>(value, op);
    if (t.numel() == 0) return;
    if (t.is_contiguous() || is_non_overlapping_and_dense(t)) {
      fill_contiguous(static_cast<scalar_t*>(t.raw_data()), t.numel(), v);
    } else {
      fill_strided(t, v);
    }
  });
}

// zero_contiguous: every dtype's zero is all-zero bits; t is contiguous or,
// like a fresh *_like result, non-overlapping and dense (nbytes from its
// first element are exactly its elements).
void zero_contiguous(const Tensor& t) {
  char* data = static_cast<char*>(t.raw_data());
  const int64_t nbytes = t.nbytes();
  if (nbytes == 0) return;
  parallel_for(nbytes, kParallelGrain * 4, [&](int64_t begin, int64_t end) {
    std::memset(data + begin, 0, static_cast<size_t>(end - begin));
  });
}

Tensor cpu_factory(IntArrayRef size, DType dtype, std::string_view op) {
  check_factory_size(size, op);
  return make_tensor(size, dtype, kCPU);
}

// arange_fill: p[i] = start + step * i in PyTorch's CPU accumulate type
// (int64 for integers, double for f32/f64, float for f16/bf16).
template <class T> void arange_fill(T* p, int64_t n, const Scalar& start, const Scalar& step) {
  if constexpr (std::is_integral_v<T>) {
    // Unsigned arithmetic: step * i may pass int64's range on the way to a
    // value inside [start, end]; wrapping makes the sum exact.
    const uint64_t xstart = static_cast<uint64_t>(start.to_int()), xstep = static_cast<uint64_t>(step.to_int());
    parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) {
        p[i] = static_cast<T>(static_cast<int64_t>(xstart + xstep * static_cast<uint64_t>(i)));
      }
    });
  } else {
    using acc_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, double>;
    const acc_t xstart = static_cast<acc_t>(start.to_double()), xstep = static_cast<acc_t>(step.to_double());
    parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) p[i] = static_cast<T>(xstart + xstep * static_cast<acc_t>(i));
    });
  }
}

Tensor arange_impl(const Scalar& start, const Scalar& end, const Scalar& step, std::optional<DType> dtype,
                   std::string_view op) {
  const ArangeGeometry g = arange_geometry(start, end, step, dtype, op);  // refuses b8
  Tensor out = make_tensor({g.numel}, g.dtype, kCPU);
  OPSPEC_DISPATCH_ALL_DTYPES(g.dtype, op, [&] {
    if constexpr (!std::is_same_v<scalar_t, bool>) {
      arange_fill(static_cast<scalar_t*>(out.raw_data()), g.numel, start, step);
    }
  });
  return out;
}

// like_cpu: a cpu tensor shaped and laid out like self (like_result_strides)
// filled by fill, or like_op's kernel on the requested device when it is not cpu.
template <class Fill>
Tensor like_cpu(const Tensor& self, std::optional<DType> dtype, std::optional<Device> device,
                std::optional<int64_t> memory_format, std::string_view like_op, std::vector<Value> extra, Fill fill) {
  const DType out_dtype = dtype.value_or(self.dtype());
  const Device target = device.value_or(self.device());
  if (!target.is_cpu()) return like_on_device(like_op, self, std::move(extra), out_dtype, target, memory_format);
  Tensor out = make_tensor_with_strides(self.sizes(), like_result_strides(self, memory_format, like_op), out_dtype, kCPU);
  fill(out);
  return out;
}

}  // namespace

Tensor empty_cpu(IntArrayRef size, std::optional<DType> dtype, std::optional<int64_t>, std::optional<Device>,
                 std::optional<bool>, std::optional<int64_t> memory_format) {
  constexpr std::string_view kOp = "aten::empty.memory_format";
  check_factory_size(size, kOp);
  return make_tensor_with_strides(size, factory_strides(size, memory_format, kOp), dtype.value_or(kDefaultFloat), kCPU);
}

Tensor empty_strided_cpu(IntArrayRef size, IntArrayRef stride, std::optional<DType> dtype, std::optional<int64_t>,
                         std::optional<Device>, std::optional<bool>) {
  check_factory_size(size, "aten::empty_strided");
  return make_strided(size, stride, dtype.value_or(kDefaultFloat), kCPU);
}

Tensor zeros_cpu(IntArrayRef size, std::optional<DType> dtype, std::optional<int64_t>, std::optional<Device>,
                 std::optional<bool>) {
  Tensor out = cpu_factory(size, dtype.value_or(kDefaultFloat), "aten::zeros");
  zero_contiguous(out);
  return out;
}

// new_zeros: zeros on self's device, in self's dtype unless given.
Tensor new_zeros_cpu(const Tensor& self, IntArrayRef size, std::optional<DType> dtype, std::optional<int64_t>,
                     std::optional<Device> device, std::optional<bool>) {
  OPSPEC_CHECK(!device || *device == self.device(), "aten::new_zeros: a device other than self's (",
               self.device().str(), ") is not supported, got ", device->str());
  Tensor out = cpu_factory(size, dtype.value_or(self.dtype()), "aten::new_zeros");
  zero_contiguous(out);
  return out;
}

Tensor ones_cpu(IntArrayRef size, std::optional<DType> dtype, std::optional<int64_t>, std::optional<Device>,
                std::optional<bool>) {
  Tensor out = cpu_factory(size, dtype.value_or(kDefaultFloat), "aten::ones");
  fill_tensor(out, 1, "aten::ones");
  return out;
}

Tensor full_cpu(IntArrayRef size, const Scalar& fill_value, std::optional<DType> dtype, std::optional<int64_t>,
                std::optional<Device>, std::optional<bool>) {
  Tensor out = cpu_factory(size, full_dtype(fill_value, dtype), "aten::full");
  fill_tensor(out, fill_value, "aten::full");
  return out;
}

Tensor scalar_tensor_cpu(const Scalar& s, std::optional<DType> dtype, std::optional<int64_t>,
                         std::optional<Device>, std::optional<bool>) {
  Tensor out = make_tensor({}, dtype.value_or(kDefaultFloat), kCPU);
  fill_tensor(out, s, "aten::scalar_tensor");
  return out;
}

Tensor arange_cpu(const Scalar& end, std::optional<DType> dtype, std::optional<int64_t>, std::optional<Device>,
                  std::optional<bool>) {
  return arange_impl(0, end, 1, dtype, "aten::arange");
}

Tensor arange_start_cpu(const Scalar& start, const Scalar& end, std::optional<DType> dtype, std::optional<int64_t>,
                        std::optional<Device>, std::optional<bool>) {
  return arange_impl(start, end, 1, dtype, "aten::arange.start");
}

Tensor arange_start_step_cpu(const Scalar& start, const Scalar& end, const Scalar& step, std::optional<DType> dtype,
                             std::optional<int64_t>, std::optional<Device>, std::optional<bool>) {
  return arange_impl(start, end, step, dtype, "aten::arange.start_step");
}

Tensor empty_like_cpu(const Tensor& self, std::optional<DType> dtype, std::optional<int64_t>,
                      std::optional<Device> device, std::optional<bool>, std::optional<int64_t> memory_format) {
  return like_cpu(self, dtype, device, memory_format, "aten::empty_like", {}, [](const Tensor&) {});
}

Tensor zeros_like_cpu(const Tensor& self, std::optional<DType> dtype, std::optional<int64_t>,
                      std::optional<Device> device, std::optional<bool>, std::optional<int64_t> memory_format) {
  return like_cpu(self, dtype, device, memory_format, "aten::zeros_like", {},
                  [](const Tensor& t) { zero_contiguous(t); });
}

Tensor ones_like_cpu(const Tensor& self, std::optional<DType> dtype, std::optional<int64_t>,
                     std::optional<Device> device, std::optional<bool>, std::optional<int64_t> memory_format) {
  return like_cpu(self, dtype, device, memory_format, "aten::ones_like", {},
                  [](const Tensor& t) { fill_tensor(t, 1, "aten::ones_like"); });
}

Tensor full_like_cpu(const Tensor& self, const Scalar& fill_value, std::optional<DType> dtype,
                     std::optional<int64_t>, std::optional<Device> device, std::optional<bool>,
                     std::optional<int64_t> memory_format) {
  return like_cpu(self, dtype, device, memory_format, "aten::full_like", {Value(fill_value)},
                  [&](const Tensor& t) { fill_tensor(t, fill_value, "aten::full_like"); });
}

Tensor fill_cpu(const Tensor& self, const Scalar& value) {
  fill_tensor(self, value, "aten::fill_.Scalar");
  self.impl()->bump_version();
  return self;
}

// fill_.Tensor: fill_.Scalar with value.item(), as PyTorch's fill_ of a value
// on another device (the same values as its copy_ of one on self's).
Tensor fill_tensor_cpu(const Tensor& self, const Tensor& value) {
  check_fill_value(self, value);
  require_cpu_device(self.device(), "aten::fill_");
  return fill_cpu(self, read_scalar(value));
}

Tensor zero_cpu(const Tensor& self) {
  if (self.is_contiguous()) {
    zero_contiguous(self);
  } else {
    fill_tensor(self, 0, "aten::zero_");
  }
  self.impl()->bump_version();
  return self;
}

}  // namespace opspec::internal
