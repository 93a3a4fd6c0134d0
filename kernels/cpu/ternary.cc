// ternary.cc: CPU kernels of addcmul, addcdiv and lerp and their in-place
// forms, the elementwise ops optimizers run (See Note [Ternary pointwise
// ops]). Operands are cast to the common dtype, then a shared functor runs
// over a TensorIterator; the in-place forms go through binary_loops.h's
// inplace_apply, as add_ and mul_ do.
#include "kernels/common/elementwise_ops.h"
#include "kernels/cpu/binary_loops.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/loops.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/elementwise_rules.h"

namespace opspec::internal {
namespace {

// ternary_value: a Scalar as the compute type of storage type T, as ATen's
// kernels read it: value.to<scalar_t>() for f32, f64 and integers,
// value.to<float>() (not rounded to f16/bf16 first) for the reduced types.
template <class T>
arith_t<T> ternary_value(const Scalar& s) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(s.to_int());
  } else {
    return s.to<opmath_t<T>>();
  }
}

// ternary_into: out = make<T>()(a, b, c) for out's dtype T, the operands cast to T.
template <bool kFloatingOnly, class Make>
void ternary_into(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c, std::string_view op,
                  const Make& make) {
  if (out.numel() == 0) return;
  const DType dt = out.dtype();
  const Tensor in[] = {cast_for_compute(a, dt), cast_for_compute(b, dt), cast_for_compute(c, dt)};
  TensorIterator iter(out, in);
  OPSPEC_DISPATCH_ALL_DTYPES(dt, op, [&] {
    if constexpr (std::is_same_v<scalar_t, bool> ||
                  (kFloatingOnly && !std::is_floating_point_v<opmath_t<scalar_t>>)) {
      OPSPEC_INTERNAL_ASSERT(false);  // the meta rules refused these dtypes
    } else {
      cpu_kernel<scalar_t, scalar_t, scalar_t, scalar_t>(iter, make.template operator()<scalar_t>());
    }
  });
}

// lerp_scalar_into: out = lerp(a, b, weight) for out's floating dtype.
void lerp_scalar_into(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& weight) {
  if (out.numel() == 0) return;
  const Tensor in[] = {a, b};
  TensorIterator iter(out, in);
  OPSPEC_DISPATCH_FLOATING_DTYPES(out.dtype(), "aten::lerp", [&] {
    using C = opmath_t<scalar_t>;
    cpu_kernel<scalar_t, scalar_t, scalar_t>(iter, LerpScalarOp<C>{ternary_value<scalar_t>(weight)});
  });
}

auto addcmul_functor(const Scalar& value) {
  return [&value]<class T>() { return AddcmulOp<arith_t<T>>{ternary_value<T>(value)}; };
}
auto addcdiv_functor(const Scalar& value) {
  return [&value]<class T>() { return AddcdivOp<opmath_t<T>>{ternary_value<T>(value)}; };
}
auto lerp_functor() {
  return []<class T>() { return LerpOp{}; };
}

// ---- addcmul, addcdiv ----

template <bool kDiv>
Tensor addc_cpu(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  constexpr std::string_view kOp = kDiv ? "aten::addcdiv" : "aten::addcmul";
  const ElementwiseMeta m = addc_meta(self, t1, t2, kDiv, kOp);
  Tensor out = elementwise_output(m, kOp);
  if constexpr (kDiv) {
    ternary_into<true>(out, self, t1, t2, kOp, addcdiv_functor(value));
  } else {
    ternary_into<false>(out, self, t1, t2, kOp, addcmul_functor(value));
  }
  return out;
}

template <bool kDiv>
Tensor addc__cpu(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  constexpr std::string_view kOp = kDiv ? "aten::addcdiv_" : "aten::addcmul_";
  const ElementwiseMeta m = addc_inplace_meta(self, t1, t2, kDiv, kOp);
  const auto kernel = [&](const Tensor& out, const Tensor& s, const Tensor& a, const Tensor& b) {
    if constexpr (kDiv) {
      ternary_into<true>(out, s, a, b, kOp, addcdiv_functor(value));
    } else {
      ternary_into<false>(out, s, a, b, kOp, addcmul_functor(value));
    }
  };
  return inplace_apply(self, m, kOp, kernel, t1, t2);
}

// ---- lerp ----

Tensor lerp_scalar_cpu(const Tensor& self, const Tensor& end, const Scalar& weight) {
  constexpr std::string_view kOp = "aten::lerp";
  const ElementwiseMeta m = lerp_meta(self, end, nullptr, kOp);
  Tensor out = elementwise_output(m, kOp);
  lerp_scalar_into(out, self, end, weight);
  return out;
}

Tensor lerp_tensor_cpu(const Tensor& self, const Tensor& end, const Tensor& weight) {
  constexpr std::string_view kOp = "aten::lerp";
  const ElementwiseMeta m = lerp_meta(self, end, &weight, kOp);
  Tensor out = elementwise_output(m, kOp);
  ternary_into<true>(out, self, end, weight, kOp, lerp_functor());
  return out;
}

Tensor lerp__scalar_cpu(const Tensor& self, const Tensor& end, const Scalar& weight) {
  constexpr std::string_view kOp = "aten::lerp_";
  const ElementwiseMeta m = lerp_inplace_meta(self, end, nullptr, kOp);
  const auto kernel = [&](const Tensor& out, const Tensor& s, const Tensor& e) { lerp_scalar_into(out, s, e, weight); };
  return inplace_apply(self, m, kOp, kernel, end);
}

Tensor lerp__tensor_cpu(const Tensor& self, const Tensor& end, const Tensor& weight) {
  constexpr std::string_view kOp = "aten::lerp_";
  const ElementwiseMeta m = lerp_inplace_meta(self, end, &weight, kOp);
  const auto kernel = [&](const Tensor& out, const Tensor& s, const Tensor& e, const Tensor& w) {
    ternary_into<true>(out, s, e, w, kOp, lerp_functor());
  };
  return inplace_apply(self, m, kOp, kernel, end, weight);
}

}  // namespace

void register_ternary_cpu_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kCPU;
  lib.impl("addcmul", kKey, &addc_cpu<false>)
      .impl("addcdiv", kKey, &addc_cpu<true>)
      .impl("addcmul_", kKey, &addc__cpu<false>)
      .impl("addcdiv_", kKey, &addc__cpu<true>)
      .impl("lerp.Scalar", kKey, &lerp_scalar_cpu)
      .impl("lerp.Tensor", kKey, &lerp_tensor_cpu)
      .impl("lerp_.Scalar", kKey, &lerp__scalar_cpu)
      .impl("lerp_.Tensor", kKey, &lerp__tensor_cpu);
}

}  // namespace opspec::internal
