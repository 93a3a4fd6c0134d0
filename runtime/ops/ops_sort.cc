// ops_sort.cc: the public API of the sorting, scan and value-selecting
// reduction ops (prod, max/min, cumsum/cumprod, sort, topk); see ops.h.
#include "runtime/core/call_site.h"
#include "runtime/ops/internal/call.h"
#include "runtime/ops/op_table.h"
#include "runtime/ops/ops.h"

namespace opspec::ops {
namespace {

using internal::call;
using OptDType = std::optional<DType>;
using OptBool = std::optional<bool>;
using Pair = std::tuple<Tensor, Tensor>;

}  // namespace

#define OPSPEC_SITE CallSiteScope site_scope_(loc)

Tensor prod(const Tensor& self, std::optional<DType> dtype, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, OptDType)>(OpId::prod, self, dtype);
}
Tensor prod(const Tensor& self, int64_t dim, bool keepdim, std::optional<DType> dtype,
            const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, bool, OptDType)>(OpId::prod_dim_int, self, dim, keepdim, dtype);
}
Tensor max(const Tensor& self, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&)>(OpId::max, self);
}
Tensor min(const Tensor& self, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&)>(OpId::min, self);
}
Tensor max(const Tensor& self, const Tensor& other, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const Tensor&)>(OpId::max_other, self, other);
}
Tensor min(const Tensor& self, const Tensor& other, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const Tensor&)>(OpId::min_other, self, other);
}
std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Pair(const Tensor&, int64_t, bool)>(OpId::max_dim, self, dim, keepdim);
}
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Pair(const Tensor&, int64_t, bool)>(OpId::min_dim, self, dim, keepdim);
}
Tensor cumsum(const Tensor& self, int64_t dim, std::optional<DType> dtype, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, OptDType)>(OpId::cumsum, self, dim, dtype);
}
Tensor cumprod(const Tensor& self, int64_t dim, std::optional<DType> dtype, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, OptDType)>(OpId::cumprod, self, dim, dtype);
}
std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Pair(const Tensor&, int64_t, bool)>(OpId::sort, self, dim, descending);
}
std::tuple<Tensor, Tensor> sort(const Tensor& self, std::optional<bool> stable, int64_t dim, bool descending,
                                const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Pair(const Tensor&, OptBool, int64_t, bool)>(OpId::sort_stable, self, stable, dim, descending);
}
std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted,
                                const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Pair(const Tensor&, int64_t, int64_t, bool, bool)>(OpId::topk, self, k, dim, largest, sorted);
}

}  // namespace opspec::ops
