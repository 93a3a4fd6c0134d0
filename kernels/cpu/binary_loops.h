// binary_loops.h: the typed loops behind the elementwise binary kernels
// (binary.cc, compare.cc, pointwise.cc): inputs cast to the compute dtype, then a shared
// functor (See Note [Shared elementwise functors]) over a TensorIterator.
#pragma once

#include <string_view>
#include <type_traits>

#include "kernels/common/elementwise_ops.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/loops.h"
#include "runtime/ops/elementwise_rules.h"

namespace opspec::internal {

// elementwise_output: a fresh cpu result of m's sizes and result dtype
// (refusing a device elsewhere, naming op).
inline Tensor elementwise_output(const ElementwiseMeta& m, std::string_view op) {
  require_cpu_device(m.device, op);
  return make_elementwise_output(m, kCPU);
}

// arith_into: out = make<T>()(a, b) for out's dtype T, a and b cast to T.
// kFloatingOnly skips instantiating integer loops for ops that never need them.
template <bool kFloatingOnly = false, class Make>
void arith_into(const Tensor& out, const Tensor& a, const Tensor& b, std::string_view op, const Make& make) {
  if (out.numel() == 0) return;
  OPSPEC_DISPATCH_ALL_DTYPES(out.dtype(), op, [&] {
    if constexpr (kFloatingOnly && !std::is_floating_point_v<opmath_t<scalar_t>>) {
      OPSPEC_INTERNAL_ASSERT(false);
    } else {
      using C = arith_t<scalar_t>;
      const auto f = make.template operator()<scalar_t>();
      const CastArgs<std::remove_cvref_t<decltype(f)>, C> g{f};  // f(C(x), C(y)), keeping f's loop traits
      if (small_contiguous_kernel<scalar_t, scalar_t, scalar_t>(g, out, a, b)) return;  // See Note [Small contiguous fast path].
      const Tensor in[] = {cast_for_compute(a, out.dtype()), cast_for_compute(b, out.dtype())};
      TensorIterator iter(out, in);
      cpu_kernel<scalar_t, scalar_t, scalar_t>(iter, g);
    }
  });
}

// inplace_apply: self = kernel(out, self, others...) with out self itself when
// m.compute_dtype is self's dtype, else a buffer of that dtype copied into
// self (TensorIterator's cast_common_dtype_to_outputs). The meta rules refused
// the overlaps PyTorch refuses; an operand that still shares memory with self
// (PyTorch's kTooHard, e.g. a column of self) is copied first so no element is
// read after it was written (See Note [Memory overlap]). Bumps self's version.
template <class Kernel, class... Others>
Tensor inplace_apply(const Tensor& self, const ElementwiseMeta& m, std::string_view op, const Kernel& kernel,
                     const Others&... others) {
  require_cpu_device(self.device(), op);
  if (self.numel() != 0) {
    const auto aside = [&self](const Tensor& t) {
      if (!partial_overlap(self, t)) return t;
      Tensor copy = make_tensor(t.sizes(), t.dtype(), kCPU);
      copy_into(copy, t);
      return copy;
    };
    if (m.compute_dtype == self.dtype()) {
      kernel(self, self, aside(others)...);
    } else {
      Tensor tmp = make_tensor(self.sizes(), m.compute_dtype, kCPU);
      kernel(tmp, self, aside(others)...);
      copy_into(self, tmp);
    }
  }
  self.impl()->bump_version();
  return self;
}

// unary_into: out = f(a) for one dtype T (a already has dtype T).
template <class T, class F>
inline void unary_into(const TensorIterator& iter, const F& f) {
  cpu_kernel<T, T>(iter, [f](opmath_t<T> x) { return f(static_cast<arith_t<T>>(x)); });
}

// predicate_into: out (b8) = Op{}(a, b) computed in compute_dtype.
template <class Op>
void predicate_into(const Tensor& out, const Tensor& a, const Tensor& b, DType compute_dtype, std::string_view op) {
  if (out.numel() == 0) return;
  const Tensor in[] = {cast_for_compute(a, compute_dtype), cast_for_compute(b, compute_dtype)};
  TensorIterator iter(out, in);
  OPSPEC_DISPATCH_ALL_DTYPES(compute_dtype, op, [&] {
    cpu_kernel<bool, scalar_t, scalar_t>(iter, [](opmath_t<scalar_t> x, opmath_t<scalar_t> y) { return Op{}(x, y); });
  });
}

}  // namespace opspec::internal
