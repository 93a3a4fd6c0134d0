// inplace_apply.h: inplace_apply, how the CUDA in-place elementwise kernels
// (elementwise.cc's add_/mul_/div_, ternary.cc's addcmul_/addcdiv_/lerp_)
// write self, as kernels/cpu/binary_loops.h's does on the CPU.
#pragma once

#include <string_view>

#include "kernels/cuda/cuda_copy.h"
#include "kernels/cuda/cuda_device.h"
#include "runtime/ops/elementwise_rules.h"

namespace opspec::internal::cuda {

// inplace_apply: self = kernel(out, self, others...) with out self itself when
// m.compute_dtype is self's dtype, else a device buffer of that dtype copied
// into self. A cuda operand that still shares memory with self (what the meta
// rules let through, See Note [Memory overlap]) is copied aside first; a cpu
// 0-dim operand is read as a scalar. Bumps self's version.
template <class Kernel, class... Others>
Tensor inplace_apply(const Tensor& self, const ElementwiseMeta& m, std::string_view op, const Kernel& kernel,
                     const Others&... others) {
  const Device dev = require_device(self.device(), op);
  if (self.numel() != 0) {
    const auto aside = [&](const Tensor& t) {
      if (!t.device().is_cuda() || !partial_overlap(self, t)) return t;
      Tensor copy = empty_cuda(t.sizes(), t.dtype(), dev);
      device_copy(copy, t);
      return copy;
    };
    if (m.compute_dtype == self.dtype()) {
      kernel(self, self, aside(others)...);
    } else {
      Tensor tmp = empty_cuda(self.sizes(), m.compute_dtype, dev);
      kernel(tmp, self, aside(others)...);
      device_copy(self, tmp);
    }
  }
  self.impl()->bump_version();
  return self;
}

}  // namespace opspec::internal::cuda
