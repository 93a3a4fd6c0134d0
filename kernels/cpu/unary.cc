// unary.cc: CPU kernels of the elementwise unary ops. The math is the shared
// functors of kernels/common/elementwise_ops.h (See Note [Shared elementwise
// functors]); this file only casts, allocates and loops.
#include <type_traits>

#include "kernels/common/elementwise_ops.h"
#include "kernels/cpu/loops.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/elementwise_rules.h"

namespace opspec::internal {
namespace {

// unary_loop: out = op(self) under a unary_ops.def row's rule: kFloating rows
// compute integers and bools in f32 (out then is f32), kFloatingOnly rows
// take floating self only, kKeepDtype rows keep self's dtype (b8 rejected by
// unary_meta) and kKeepDtypeBool rows keep b8 too. out may be self (the
// in-place form: each element is read before it is written).
template <UnaryKind kRule, class Op>
void unary_loop(const Tensor& out, const Tensor& self, DType compute_dtype, std::string_view op_name, Op op) {
  if (out.numel() == 0) return;
  if constexpr (kRule == UnaryKind::kFloating || kRule == UnaryKind::kFloatingOnly) {
    // The functor itself, not a lambda around it, so the loops see its fast
    // path (See Note [Functor fast paths]).
    OPSPEC_DISPATCH_FLOATING_DTYPES(compute_dtype, op_name, [&] {
      if (small_contiguous_kernel<scalar_t, scalar_t>(op, out, self)) return;  // See Note [Small contiguous fast path].
      const Tensor in[] = {cast_for_compute(self, compute_dtype)};
      cpu_kernel<scalar_t, scalar_t>(TensorIterator(out, in), op);
    });
  } else {
    static_assert(kRule == UnaryKind::kKeepDtype || kRule == UnaryKind::kKeepDtypeBool);
    OPSPEC_DISPATCH_ALL_DTYPES(compute_dtype, op_name, [&] {
      if constexpr (std::is_same_v<scalar_t, bool> && kRule == UnaryKind::kKeepDtype) {
        OPSPEC_INTERNAL_ASSERT(false);
      } else {
        const auto f = [op](opmath_t<scalar_t> x) { return op(x); };
        if (small_contiguous_kernel<scalar_t, scalar_t>(f, out, self)) return;  // See Note [Small contiguous fast path].
        const Tensor in[] = {self};
        cpu_kernel<scalar_t, scalar_t>(TensorIterator(out, in), f);
      }
    });
  }
}

// unary_cpu: the kernel of a unary_ops.def row.
template <UnaryKind kRule, class Op>
Tensor unary_cpu(const Tensor& self, std::string_view op_name, Op op) {
  const ElementwiseMeta m = unary_meta(self, kRule, op_name);
  require_cpu_device(m.device, op_name);
  Tensor out = make_elementwise_output(m, kCPU);
  unary_loop<kRule>(out, self, m.compute_dtype, op_name, op);
  return out;
}

// unary_inplace_cpu: the kernel of a row's in-place op (See Note [In-place
// unary ops]): computed in self's dtype, over self.
template <UnaryKind kRule, class Op>
Tensor unary_inplace_cpu(const Tensor& self, std::string_view op_name, Op op) {
  const ElementwiseMeta m = unary_inplace_meta(self, kRule, op_name);
  require_cpu_device(m.device, op_name);
  unary_loop<kRule>(self, self, m.compute_dtype, op_name, op);
  self.impl()->bump_version();
  return self;
}

#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary)                                                  \
  Tensor name##_cpu(const Tensor& self) { return unary_cpu<UnaryKind::dtype_rule>(self, "aten::" #name, functor##Op{}); } \
  Tensor name##__cpu(const Tensor& self) {                                                                   \
    return unary_inplace_cpu<UnaryKind::dtype_rule>(self, "aten::" #name "_", functor##Op{});              \
  }
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP

Tensor gelu_cpu(const Tensor& self, std::string_view approximate) {
  if (gelu_uses_tanh(approximate)) return unary_cpu<UnaryKind::kFloatingOnly>(self, "aten::gelu", GeluTanhOp{});
  return unary_cpu<UnaryKind::kFloatingOnly>(self, "aten::gelu", GeluErfOp{});
}

Tensor logical_not_cpu(const Tensor& self) {
  constexpr std::string_view kOp = "aten::logical_not";
  const ElementwiseMeta m = unary_meta(self, UnaryKind::kLogical, kOp);
  require_cpu_device(m.device, kOp);
  Tensor out = make_elementwise_output(m, kCPU);
  if (out.numel() == 0) return out;
  const Tensor in[] = {self};
  TensorIterator iter(out, in);
  OPSPEC_DISPATCH_ALL_DTYPES(self.dtype(), kOp, [&] {
    cpu_kernel<bool, scalar_t>(iter, [](opmath_t<scalar_t> x) { return LogicalNotOp{}(x); });
  });
  return out;
}

}  // namespace

Tensor bitwise_not_cpu(const Tensor& self) {
  constexpr std::string_view kOp = "aten::bitwise_not";
  const ElementwiseMeta m = bitwise_not_meta(self);
  require_cpu_device(m.device, kOp);
  Tensor out = make_elementwise_output(m, kCPU);
  if (out.numel() == 0) return out;
  const Tensor in[] = {self};
  TensorIterator iter(out, in);
  switch (self.dtype()) {
    case DType::kBool: cpu_kernel<bool, bool>(iter, [](bool x) { return BitwiseNotOp{}(x); }); break;
    case DType::kInt32: cpu_kernel<int32_t, int32_t>(iter, [](int32_t x) { return BitwiseNotOp{}(x); }); break;
    default: cpu_kernel<int64_t, int64_t>(iter, [](int64_t x) { return BitwiseNotOp{}(x); }); break;
  }
  return out;
}

void register_unary_cpu_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kCPU;
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) \
  lib.impl(#name, kKey, &name##_cpu).impl(#name "_", kKey, &name##__cpu);
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
  lib.impl("gelu", kKey, &gelu_cpu).impl("logical_not", kKey, &logical_not_cpu).impl("bitwise_not", kKey, &bitwise_not_cpu);
}

}  // namespace opspec::internal
