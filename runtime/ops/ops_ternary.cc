// ops_ternary.cc: the public API of addcmul, addcdiv and lerp and their
// in-place forms (See Note [Ternary pointwise ops]); see ops.h.
#include "runtime/core/call_site.h"
#include "runtime/ops/internal/call.h"
#include "runtime/ops/ops.h"

namespace opspec::ops {
namespace {

using internal::call;
using AddcSig = Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&);
using LerpScalarSig = Tensor(const Tensor&, const Tensor&, const Scalar&);
using LerpTensorSig = Tensor(const Tensor&, const Tensor&, const Tensor&);

}  // namespace

#define OPSPEC_SITE CallSiteScope site_scope_(loc)

Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value,
               const std::source_location& loc) {
  OPSPEC_SITE;
  return call<AddcSig>(OpId::addcmul, self, tensor1, tensor2, value);
}
Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value,
               const std::source_location& loc) {
  OPSPEC_SITE;
  return call<AddcSig>(OpId::addcdiv, self, tensor1, tensor2, value);
}
Tensor& addcmul_(Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value,
                 const std::source_location& loc) {
  OPSPEC_SITE;
  call<AddcSig>(OpId::addcmul_, self, tensor1, tensor2, value);
  return self;
}
Tensor& addcdiv_(Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value,
                 const std::source_location& loc) {
  OPSPEC_SITE;
  call<AddcSig>(OpId::addcdiv_, self, tensor1, tensor2, value);
  return self;
}
Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<LerpScalarSig>(OpId::lerp_Scalar, self, end, weight);
}
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<LerpTensorSig>(OpId::lerp_Tensor, self, end, weight);
}
Tensor& lerp_(Tensor& self, const Tensor& end, const Scalar& weight, const std::source_location& loc) {
  OPSPEC_SITE;
  call<LerpScalarSig>(OpId::lerp__Scalar, self, end, weight);
  return self;
}
Tensor& lerp_(Tensor& self, const Tensor& end, const Tensor& weight, const std::source_location& loc) {
  OPSPEC_SITE;
  call<LerpTensorSig>(OpId::lerp__Tensor, self, end, weight);
  return self;
}

}  // namespace opspec::ops
