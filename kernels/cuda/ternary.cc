// ternary.cc: CUDA kernels of addcmul, addcdiv and lerp and their in-place
// forms. Each mirrors kernels/cpu/ternary.cc: the same meta rule, the same
// functor on the device (See Note [Ternary pointwise ops]), parameters
// converted as there.
#include <type_traits>

#include "kernels/cuda/cuda_copy.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/elementwise_args.h"
#include "kernels/cuda/inplace_apply.h"
#include "kernels/cuda/ternary_launch.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/elementwise_rules.h"

namespace opspec::internal::cuda {
namespace {

// ternary_param: value or weight as the compute type of storage dtype reads
// it: value.to<scalar_t>() for f32, f64 and integers, value.to<float>() for
// f16 and bf16 (the CPU's ternary_value).
Param ternary_param(DType storage, const Scalar& s) {
  Param p;
  switch (storage) {
    case DType::kFloat64: p.f = s.to_double(); break;
    case DType::kFloat32:
    case DType::kFloat16:
    case DType::kBFloat16: p.f32 = s.to<float>(); break;
    default: p.i = s.to_int(); break;
  }
  return p;
}

// launch_ternary_op: out = op(inputs) in out's dtype, the inputs converted to it.
void launch_ternary_op(const Tensor& out, std::initializer_list<Tensor> inputs, TernaryOp op, const Param& p) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  const DType dt = out.dtype();
  const ElementwiseArgs a =
      inputs.size() == 2 ? make_args(out, inputs, {dt, dt}) : make_args(out, inputs, {dt, dt, dt});
  launch_ternary(op, code_of(dt), a, p);
}

Tensor ternary_output(const ElementwiseMeta& m, std::string_view op) {
  return make_elementwise_output(m, require_device(m.device, op));
}

template <bool kDiv>
Tensor addc_cuda(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  constexpr std::string_view kOp = kDiv ? "aten::addcdiv" : "aten::addcmul";
  const ElementwiseMeta m = addc_meta(self, t1, t2, kDiv, kOp);
  Tensor out = ternary_output(m, kOp);
  launch_ternary_op(out, {self, t1, t2}, kDiv ? TernaryOp::kAddcdiv : TernaryOp::kAddcmul,
                    ternary_param(out.dtype(), value));
  return out;
}

template <bool kDiv>
Tensor addc__cuda(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  constexpr std::string_view kOp = kDiv ? "aten::addcdiv_" : "aten::addcmul_";
  const ElementwiseMeta m = addc_inplace_meta(self, t1, t2, kDiv, kOp);
  const auto kernel = [&](const Tensor& out, const Tensor& s, const Tensor& a, const Tensor& b) {
    launch_ternary_op(out, {s, a, b}, kDiv ? TernaryOp::kAddcdiv : TernaryOp::kAddcmul,
                      ternary_param(out.dtype(), value));
  };
  return inplace_apply(self, m, kOp, kernel, t1, t2);
}

Tensor lerp_scalar_cuda(const Tensor& self, const Tensor& end, const Scalar& weight) {
  const ElementwiseMeta m = lerp_meta(self, end, nullptr, "aten::lerp");
  Tensor out = ternary_output(m, "aten::lerp");
  launch_ternary_op(out, {self, end}, TernaryOp::kLerpScalar, ternary_param(out.dtype(), weight));
  return out;
}

Tensor lerp_tensor_cuda(const Tensor& self, const Tensor& end, const Tensor& weight) {
  const ElementwiseMeta m = lerp_meta(self, end, &weight, "aten::lerp");
  Tensor out = ternary_output(m, "aten::lerp");
  launch_ternary_op(out, {self, end, weight}, TernaryOp::kLerp, {});
  return out;
}

Tensor lerp__scalar_cuda(const Tensor& self, const Tensor& end, const Scalar& weight) {
  constexpr std::string_view kOp = "aten::lerp_";
  const ElementwiseMeta m = lerp_inplace_meta(self, end, nullptr, kOp);
  const auto kernel = [&](const Tensor& out, const Tensor& s, const Tensor& e) {
    launch_ternary_op(out, {s, e}, TernaryOp::kLerpScalar, ternary_param(out.dtype(), weight));
  };
  return inplace_apply(self, m, kOp, kernel, end);
}

Tensor lerp__tensor_cuda(const Tensor& self, const Tensor& end, const Tensor& weight) {
  constexpr std::string_view kOp = "aten::lerp_";
  const ElementwiseMeta m = lerp_inplace_meta(self, end, &weight, kOp);
  const auto kernel = [&](const Tensor& out, const Tensor& s, const Tensor& e, const Tensor& w) {
    launch_ternary_op(out, {s, e, w}, TernaryOp::kLerp, {});
  };
  return inplace_apply(self, m, kOp, kernel, end, weight);
}

}  // namespace

void register_ternary_cuda_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kCUDA;
  lib.impl("addcmul", kKey, &addc_cuda<false>)
      .impl("addcdiv", kKey, &addc_cuda<true>)
      .impl("addcmul_", kKey, &addc__cuda<false>)
      .impl("addcdiv_", kKey, &addc__cuda<true>)
      .impl("lerp.Scalar", kKey, &lerp_scalar_cuda)
      .impl("lerp.Tensor", kKey, &lerp_tensor_cuda)
      .impl("lerp_.Scalar", kKey, &lerp__scalar_cuda)
      .impl("lerp_.Tensor", kKey, &lerp__tensor_cuda);
}

}  // namespace opspec::internal::cuda
