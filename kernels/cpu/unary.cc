// unary.cc: CPU kernels of the elementwise unary ops. The math is the shared
// functors of kernels/common/elementwise_ops.h (See Note [Shared elementwise
// functors]); this file only casts, allocates and loops.
#include <type_traits>

#include "kernels/common/elementwise_ops.h"
#include "kernels/cpu/loops.h"
#include "kernels/meta/elementwise_meta.h"

namespace opspec::internal {
namespace {

// unary_float_cpu: ops that compute in a floating dtype (integers -> f32).
template <class Op>
Tensor unary_float_cpu(const Tensor& self, std::string_view op_name, Op op) {
  const ElementwiseMeta m = unary_meta(self, UnaryKind::kFloating, op_name);
  require_cpu_device(m.device, op_name);
  Tensor out = make_tensor(m.sizes, m.result_dtype, kCPU);
  if (out.numel() == 0) return out;
  // The functor itself, not a lambda around it, so the loops see its fast
  // path (See Note [Functor fast paths]).
  OPSPEC_DISPATCH_FLOATING_DTYPES(m.compute_dtype, op_name, [&] {
    if (small_contiguous_kernel<scalar_t, scalar_t>(op, out, self)) return;  // See Note [Small contiguous fast path].
    const Tensor in[] = {cast_for_compute(self, m.compute_dtype)};
    cpu_kernel<scalar_t, scalar_t>(TensorIterator(out, in), op);
  });
  return out;
}

// unary_keep_cpu: neg, abs, relu: same dtype in and out (bool rejected by unary_meta).
template <class Op>
Tensor unary_keep_cpu(const Tensor& self, std::string_view op_name, Op op) {
  const ElementwiseMeta m = unary_meta(self, UnaryKind::kKeepDtype, op_name);
  require_cpu_device(m.device, op_name);
  Tensor out = make_tensor(m.sizes, m.result_dtype, kCPU);
  if (out.numel() == 0) return out;
  OPSPEC_DISPATCH_ALL_DTYPES(m.compute_dtype, op_name, [&] {
    if constexpr (std::is_same_v<scalar_t, bool>) {
      OPSPEC_INTERNAL_ASSERT(false);
    } else {
      const auto f = [op](opmath_t<scalar_t> x) { return op(x); };
      if (small_contiguous_kernel<scalar_t, scalar_t>(f, out, self)) return;  // See Note [Small contiguous fast path].
      const Tensor in[] = {self};
      cpu_kernel<scalar_t, scalar_t>(TensorIterator(out, in), f);
    }
  });
  return out;
}

Tensor neg_cpu(const Tensor& self) { return unary_keep_cpu(self, "aten::neg", NegOp{}); }
Tensor abs_cpu(const Tensor& self) { return unary_keep_cpu(self, "aten::abs", AbsOp{}); }
Tensor relu_cpu(const Tensor& self) { return unary_keep_cpu(self, "aten::relu", ReluOp{}); }
Tensor sin_cpu(const Tensor& self) { return unary_float_cpu(self, "aten::sin", SinOp{}); }
Tensor cos_cpu(const Tensor& self) { return unary_float_cpu(self, "aten::cos", CosOp{}); }
Tensor exp_cpu(const Tensor& self) { return unary_float_cpu(self, "aten::exp", ExpOp{}); }
Tensor log_cpu(const Tensor& self) { return unary_float_cpu(self, "aten::log", LogOp{}); }
Tensor tanh_cpu(const Tensor& self) { return unary_float_cpu(self, "aten::tanh", TanhOp{}); }
Tensor sigmoid_cpu(const Tensor& self) { return unary_float_cpu(self, "aten::sigmoid", SigmoidOp{}); }
Tensor sqrt_cpu(const Tensor& self) { return unary_float_cpu(self, "aten::sqrt", SqrtOp{}); }
Tensor rsqrt_cpu(const Tensor& self) { return unary_float_cpu(self, "aten::rsqrt", RsqrtOp{}); }
Tensor reciprocal_cpu(const Tensor& self) { return unary_float_cpu(self, "aten::reciprocal", ReciprocalOp{}); }
Tensor erf_cpu(const Tensor& self) { return unary_float_cpu(self, "aten::erf", ErfOp{}); }
Tensor silu_cpu(const Tensor& self) { return unary_float_cpu(self, "aten::silu", SiluOp{}); }

Tensor gelu_cpu(const Tensor& self, std::string_view approximate) {
  if (gelu_uses_tanh(approximate)) return unary_float_cpu(self, "aten::gelu", GeluTanhOp{});
  return unary_float_cpu(self, "aten::gelu", GeluErfOp{});
}

Tensor logical_not_cpu(const Tensor& self) {
  constexpr std::string_view kOp = "aten::logical_not";
  const ElementwiseMeta m = unary_meta(self, UnaryKind::kLogical, kOp);
  require_cpu_device(m.device, kOp);
  Tensor out = make_tensor(m.sizes, m.result_dtype, kCPU);
  if (out.numel() == 0) return out;
  const Tensor in[] = {self};
  TensorIterator iter(out, in);
  OPSPEC_DISPATCH_ALL_DTYPES(self.dtype(), kOp, [&] {
    cpu_kernel<bool, scalar_t>(iter, [](opmath_t<scalar_t> x) { return LogicalNotOp{}(x); });
  });
  return out;
}

}  // namespace

void register_unary_cpu_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kCPU;
  lib.impl("neg", kKey, &neg_cpu)
      .impl("abs", kKey, &abs_cpu)
      .impl("relu", kKey, &relu_cpu)
      .impl("sin", kKey, &sin_cpu)
      .impl("cos", kKey, &cos_cpu)
      .impl("exp", kKey, &exp_cpu)
      .impl("log", kKey, &log_cpu)
      .impl("tanh", kKey, &tanh_cpu)
      .impl("sigmoid", kKey, &sigmoid_cpu)
      .impl("sqrt", kKey, &sqrt_cpu)
      .impl("rsqrt", kKey, &rsqrt_cpu)
      .impl("reciprocal", kKey, &reciprocal_cpu)
      .impl("erf", kKey, &erf_cpu)
      .impl("gelu", kKey, &gelu_cpu)
      .impl("silu", kKey, &silu_cpu)
      .impl("logical_not", kKey, &logical_not_cpu);
}

}  // namespace opspec::internal
