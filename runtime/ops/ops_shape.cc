// ops_shape.cc: the public API of the list-returning views split,
// split_with_sizes, unbind and chunk; see ops.h and Note [List-returning
// views] in kernels/cpu/split.cc.
#include "runtime/core/call_site.h"
#include "runtime/ops/internal/call.h"
#include "runtime/ops/op_table.h"
#include "runtime/ops/ops.h"

namespace opspec::ops {
namespace {

using TensorVec = std::vector<Tensor>;

using internal::call;  // runtime/ops/internal/call.h

}  // namespace

#define OPSPEC_SITE CallSiteScope site_scope_(loc)

std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<TensorVec(const Tensor&, int64_t, int64_t)>(OpId::split_Tensor, self, split_size, dim);
}
std::vector<Tensor> split_with_sizes(const Tensor& self, IntArrayRef split_sizes, int64_t dim,
                                     const std::source_location& loc) {
  OPSPEC_SITE;
  return call<TensorVec(const Tensor&, IntArrayRef, int64_t)>(OpId::split_with_sizes, self, split_sizes, dim);
}
std::vector<Tensor> unbind(const Tensor& self, int64_t dim, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<TensorVec(const Tensor&, int64_t)>(OpId::unbind_int, self, dim);
}
std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<TensorVec(const Tensor&, int64_t, int64_t)>(OpId::chunk, self, chunks, dim);
}

}  // namespace opspec::ops
