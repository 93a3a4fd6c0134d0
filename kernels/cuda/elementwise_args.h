// elementwise_args.h: building an ElementwiseArgs (launch.h) from tensors:
// broadcast strides, dims dropped, ordered and coalesced, index width, and
// cpu scalars folded into the launch. See Note [Elementwise launches].
#pragma once

#include <initializer_list>
#include <optional>

#include "kernels/cuda/launch.h"
#include "runtime/core/tensor.h"

namespace opspec::internal::cuda {

// make_args: the launch of out = f(inputs...). Inputs broadcast to out's
// shape (ops check this with their meta functions first). A 0-dim cpu input
// (a wrapped number, or a scalar tensor allowed beside cuda ones) becomes a
// scalar operand holding its value converted to storage[k], the type the
// kernel reads input k as. Throws NotImplementedError for more than kMaxDims
// dims left after coalescing.
ElementwiseArgs make_args(const Tensor& out, std::initializer_list<Tensor> inputs,
                          std::initializer_list<DType> storage);

// scalar_bits: the value of a one-element cpu tensor converted to dtype (as
// copy_ converts), as raw bits in the low bytes.
uint64_t scalar_bits(const Tensor& cpu_scalar, DType dtype);

}  // namespace opspec::internal::cuda
