// ops_random.cc: the public API of randint, uniform_, normal_ and bernoulli; see ops.h.
#include "runtime/core/call_site.h"
#include "runtime/ops/internal/call.h"
#include "runtime/ops/op_table.h"
#include "runtime/ops/ops.h"

namespace opspec::ops {
namespace {

using OptDType = std::optional<DType>;
using OptDevice = std::optional<Device>;
using OptInt = std::optional<int64_t>;
using OptBool = std::optional<bool>;

using internal::call;  // runtime/ops/internal/call.h

}  // namespace

#define OPSPEC_SITE CallSiteScope site_scope_(loc)

// The Python frontend passes a factory's dtype (long unless given) and device explicitly.
Tensor randint(int64_t high, IntArrayRef size, TensorOptions o, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(int64_t, IntArrayRef, OptDType, OptInt, OptDevice, OptBool);
  return call<Sig>(OpId::randint, high, size, OptDType(o.dtype.value_or(DType::kInt64)), OptInt(),
                   OptDevice(o.device.value_or(kCPU)), OptBool(false));
}
Tensor randint(int64_t low, int64_t high, IntArrayRef size, TensorOptions o, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(int64_t, int64_t, IntArrayRef, OptDType, OptInt, OptDevice, OptBool);
  return call<Sig>(OpId::randint_low, low, high, size, OptDType(o.dtype.value_or(DType::kInt64)), OptInt(),
                   OptDevice(o.device.value_or(kCPU)), OptBool(false));
}
Tensor& uniform_(Tensor& self, double from, double to, const std::source_location& loc) {
  OPSPEC_SITE;
  call<Tensor(const Tensor&, double, double, OptInt)>(OpId::uniform_, self, from, to, OptInt());
  return self;
}
Tensor& normal_(Tensor& self, double mean, double std, const std::source_location& loc) {
  OPSPEC_SITE;
  call<Tensor(const Tensor&, double, double, OptInt)>(OpId::normal_, self, mean, std, OptInt());
  return self;
}
Tensor bernoulli(const Tensor& self, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, OptInt)>(OpId::bernoulli, self, OptInt());
}
Tensor bernoulli(const Tensor& self, double p, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, double, OptInt)>(OpId::bernoulli_p, self, p, OptInt());
}

}  // namespace opspec::ops
