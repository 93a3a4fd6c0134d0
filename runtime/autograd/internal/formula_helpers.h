// formula_helpers.h: ATen's C++ operators and helpers as derivatives.yaml's
// formulas call them, so backward dispatches the overloads PyTorch's does.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/autograd/formulas.h"
#include "runtime/core/tensor.h"

namespace opspec::autograd::internal {

// mul_scalar / div_scalar: C++'s `t * s` and `t / s`: aten::mul.Scalar and
// aten::div.Scalar (ops::mul and ops::div with a Scalar dispatch the .Tensor
// overload with a wrapped number, as Python's `t * 2` does).
Tensor mul_scalar(const Tensor& t, const Scalar& s);
Tensor div_scalar(const Tensor& t, const Scalar& s);
// add_scalar / sub_scalar: C++'s `t + s` and `t - s`: aten::add.Scalar and aten::sub.Scalar.
Tensor add_scalar(const Tensor& t, const Scalar& s);
Tensor sub_scalar(const Tensor& t, const Scalar& s);
// where_scalar_other / where_scalar_self: at::where(cond, t, s) and
// at::where(cond, s, t), CompositeImplicit in PyTorch: aten::scalar_tensor
// (s in t's dtype, on t's device), then aten::where.self.
Tensor where_scalar_other(const Tensor& cond, const Tensor& t, const Scalar& s);
Tensor where_scalar_self(const Tensor& cond, const Scalar& s, const Tensor& t);

// mul_scalar_ / div_scalar_: C++'s `t.mul_(s)` and `t.div_(s)`: aten::mul_.Scalar
// and aten::div_.Scalar (ops::div_ with a Scalar is Python's, div_.Tensor).
Tensor& mul_scalar_(Tensor& t, const Scalar& s);
Tensor& div_scalar_(Tensor& t, const Scalar& s);
// scalar_sub / scalar_div: C++'s `s - t` and `s / t` as ATen's
// TensorOperators.h writes them: aten::empty_like(t, memory_format=
// torch.preserve_format), aten::fill_.Scalar(s), then aten::sub_.Tensor or
// aten::div_.Tensor with t.
Tensor scalar_sub(const Scalar& s, const Tensor& t);
Tensor scalar_div(const Scalar& s, const Tensor& t);

// as_strided_backward: FunctionsManual's, for geometries that do not overlap:
// grad (of the out geometry) written into zeros the size of the storage both
// geometries reach (new_zeros, as_strided, copy_), read back with the input's
// geometry; size-1 and stride-0 dims of out go first (squeeze, sum). Throws
// for overlapping geometries (PyTorch's index_add_ path is not implemented).
Tensor as_strided_backward(Tensor grad, IntArrayRef inp_sizes, IntArrayRef inp_strides, int64_t inp_offset,
                           std::vector<int64_t> out_sizes, std::vector<int64_t> out_strides, int64_t out_offset);

// to_dtype: C++'s t.to(dtype): t itself when the dtype matches, else aten::_to_copy.
Tensor to_dtype(const Tensor& t, DType dtype);

// subclass_like: PyTorch's isTensorSubclassLike, true for fake tensors,
// tensor subclasses, and any tensor while a dispatch mode is on: formulas
// then take their out-of-place, data-free paths.
bool subclass_like(const Tensor& t);

// maybe_multiply: t * s, or t itself when s is 1 (FunctionsManual.cpp's helper).
Tensor maybe_multiply(const Tensor& t, const Scalar& s);

// kSelf / kOther: the bits of a binary op's first and second input in a
// formula's masks of inputs that need gradients or saved tensors.
inline constexpr uint32_t kSelf = 1u, kOther = 2u;

// identity: the incoming gradient, passed on unchanged.
VariableList identity(const FormulaCall& c);

// zeros_like_grad: zeros shaped as the incoming gradient (ops whose
// derivative is zero almost everywhere: sign, round, ...).
VariableList zeros_like_grad(const FormulaCall& c);

// optional_input: the tensor given for schema argument `arg`, or nullopt
// where the call passed None.
std::optional<Tensor> optional_input(const FormulaCall& c, size_t arg);

// dims_of: an int[]? dim argument's dims (empty for None: every dim).
std::vector<int64_t> dims_of(const Value& v);

// optional_int: an int? argument's value, or nullopt for None.
std::optional<int64_t> optional_int(const Value& v);

}  // namespace opspec::autograd::internal
