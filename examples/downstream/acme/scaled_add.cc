// scaled_add.cc: acme::scaled_add: its schema, CPU kernel, Meta kernel,
// derivative formula and decomposition. The same pieces every builtin op has
// (runtime/ops/op_table.def, kernels/cpu, kernels/meta, runtime/autograd/formulas_*.cc,
// runtime/ops/decompositions.cc).

#include <cmath>

#include "acme/acme.h"
#include "runtime/autograd/formulas.h"
#include "runtime/core/call_site.h"
#include "runtime/core/error.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/ops.h"

namespace acme {
namespace {

using opspec::DispatchKey;
using opspec::DType;
using opspec::Tensor;

// check_args: what both kernels require; the messages name the op as
// builtins do, so a spec's `error:` can match them.
void check_args(const Tensor& self, const Tensor& other) {
  OPSPEC_CHECK(self.sizes() == other.sizes(), "acme::scaled_add: self has shape ", opspec::format_sizes(self.sizes()),
               " but other has shape ", opspec::format_sizes(other.sizes()));
  OPSPEC_CHECK(self.dtype() == other.dtype(), "acme::scaled_add: self is ", opspec::dtype_short_name(self.dtype()),
               " but other is ", opspec::dtype_short_name(other.dtype()));
  OPSPEC_CHECK(self.dtype() == DType::kFloat32 || self.dtype() == DType::kFloat64,
               "acme::scaled_add: expected f32 or f64 tensors, got ", opspec::dtype_short_name(self.dtype()));
}

template <class T>
void scaled_add_loop(const Tensor& out, const Tensor& self, const Tensor& other, double alpha) {
  const T* a = static_cast<const T*>(self.raw_data());
  const T* b = static_cast<const T*>(other.raw_data());
  T* o = static_cast<T*>(out.raw_data());
  const T scale = static_cast<T>(alpha);
  // a + alpha * b in T with one rounding (a fused multiply-add), exactly as
  // aten::add.Tensor computes it with alpha (PyTorch's fmadd; opspec's Note
  // [Add with alpha]), so the decomposition is bitwise equal.
  for (int64_t i = 0, n = out.numel(); i < n; ++i) o[i] = std::fma(scale, b[i], a[i]);
}

// The CPU kernel: contiguous inputs only (a real project would handle strides
// or call .contiguous() first).
Tensor scaled_add_cpu(const Tensor& self, const Tensor& other, double alpha) {
  check_args(self, other);
  OPSPEC_CHECK(self.is_contiguous() && other.is_contiguous(), "acme::scaled_add: expected contiguous tensors");
  // Outputs are made below the dispatcher, as builtin kernels make theirs, so
  // modes see acme::scaled_add and nothing inside it.
  Tensor out = opspec::internal::make_tensor(self.sizes(), self.dtype(), self.device());
  if (self.dtype() == DType::kFloat32) {
    scaled_add_loop<float>(out, self, other, alpha);
  } else {
    scaled_add_loop<double>(out, self, other, alpha);
  }
  return out;
}

// The Meta kernel: the output's geometry only. Fake tensors, make_fx and
// compile() run it; without it the op would break every graph it is in.
Tensor scaled_add_meta(const Tensor& self, const Tensor& other, double alpha) {
  check_args(self, other);
  return opspec::internal::make_tensor(self.sizes(), self.dtype(), opspec::kMeta);
}

// The derivative (derivatives.yaml's add.Tensor with alpha): self's gradient
// is grad, other's alpha * grad. Without it, backward through the op fails
// and opcheck's test_autograd_registration says the formula is missing.
opspec::autograd::VariableList scaled_add_backward(const opspec::autograd::FormulaCall& c) {
  const double alpha = c.arg(2).to_double();
  return {c.needs(0) ? c.grad() : Tensor(), c.needs(1) ? opspec::ops::mul(c.grad(), alpha) : Tensor()};
}

Tensor scaled_add_decomposition(const Tensor& self, const Tensor& other, double alpha) {
  return opspec::ops::add(self, other, alpha);
}

}  // namespace

void register_ops() {
  opspec::Library lib("acme");
  lib.def(kScaledAddSchema, opspec::OpKind::kBinary)
      .impl("scaled_add", DispatchKey::kCPU, &scaled_add_cpu)
      .impl("scaled_add", DispatchKey::kMeta, &scaled_add_meta);
  opspec::autograd::register_formula(
      {.op = "acme::scaled_add", .node_name = "ScaledAddBackward0", .backward = &scaled_add_backward});
}

Tensor scaled_add(const Tensor& self, const Tensor& other, double alpha, const std::source_location& loc) {
  opspec::CallSiteScope site(loc);  // DebugMode attributes the op to the caller's line
  static const opspec::TypedOp<Tensor(const Tensor&, const Tensor&, double)> op("acme::scaled_add");
  return op(self, other, alpha);
}

const opspec::DecompositionTable& decompositions() {
  static const opspec::DecompositionTable* table = [] {
    auto* t = new opspec::DecompositionTable();
    t->add("acme::scaled_add", &scaled_add_decomposition);
    return t;
  }();
  return *table;
}

}  // namespace acme
