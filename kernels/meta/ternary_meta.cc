// ternary_meta.cc: the Meta kernels of addcmul, addcdiv and lerp and their
// in-place forms (kernels/cpu/ternary.cc): each runs the CPU kernel's shape
// and dtype rule (See Note [Ternary pointwise ops]).
#include "kernels/meta/elementwise_meta.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/elementwise_rules.h"

namespace opspec::internal {
namespace {

template <bool kDiv>
Tensor addc_meta_kernel(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar&) {
  return meta_out(addc_meta(self, t1, t2, kDiv, kDiv ? "aten::addcdiv" : "aten::addcmul"));
}
template <bool kDiv>
Tensor addc__meta_kernel(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar&) {
  addc_inplace_meta(self, t1, t2, kDiv, kDiv ? "aten::addcdiv_" : "aten::addcmul_");
  self.impl()->bump_version();
  return self;
}
Tensor lerp_scalar_meta_kernel(const Tensor& self, const Tensor& end, const Scalar&) {
  return meta_out(lerp_meta(self, end, nullptr, "aten::lerp"));
}
Tensor lerp_tensor_meta_kernel(const Tensor& self, const Tensor& end, const Tensor& weight) {
  return meta_out(lerp_meta(self, end, &weight, "aten::lerp"));
}
Tensor lerp__scalar_meta_kernel(const Tensor& self, const Tensor& end, const Scalar&) {
  lerp_inplace_meta(self, end, nullptr, "aten::lerp_");
  self.impl()->bump_version();
  return self;
}
Tensor lerp__tensor_meta_kernel(const Tensor& self, const Tensor& end, const Tensor& weight) {
  lerp_inplace_meta(self, end, &weight, "aten::lerp_");
  self.impl()->bump_version();
  return self;
}

}  // namespace

void register_ternary_meta_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kMeta;
  lib.impl("addcmul", kKey, &addc_meta_kernel<false>)
      .impl("addcdiv", kKey, &addc_meta_kernel<true>)
      .impl("addcmul_", kKey, &addc__meta_kernel<false>)
      .impl("addcdiv_", kKey, &addc__meta_kernel<true>)
      .impl("lerp.Scalar", kKey, &lerp_scalar_meta_kernel)
      .impl("lerp.Tensor", kKey, &lerp_tensor_meta_kernel)
      .impl("lerp_.Scalar", kKey, &lerp__scalar_meta_kernel)
      .impl("lerp_.Tensor", kKey, &lerp__tensor_meta_kernel);
}

}  // namespace opspec::internal
