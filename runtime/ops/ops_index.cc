// ops_index.cc: the public API of the scatter, gather and indexing ops
// (gather, scatter*, masked_fill.Tensor, masked_select, select/slice_scatter,
// diagonal, index, index_put, nonzero); see ops.h.
#include "runtime/core/call_site.h"
#include "runtime/ops/internal/call.h"
#include "runtime/ops/op_table.h"
#include "runtime/ops/ops.h"

namespace opspec::ops {
namespace {

using internal::call;  // runtime/ops/internal/call.h

// boxed_indices: a Tensor?[] argument as the dispatcher carries it (None as an
// undefined tensor; See Note [Optional tensor lists]).
std::vector<Tensor> boxed_indices(const std::vector<std::optional<Tensor>>& indices) {
  std::vector<Tensor> out;
  out.reserve(indices.size());
  for (const std::optional<Tensor>& t : indices) out.push_back(t ? *t : Tensor());
  return out;
}

// in_place: runs an in-place op and returns self, as the other `op_` functions do.
template <class Sig, class... Args>
Tensor& in_place(OpId id, Tensor& self, Args&&... args) {
  call<Sig>(id, self, std::forward<Args>(args)...);
  return self;
}

}  // namespace

#define OPSPEC_SITE CallSiteScope site_scope_(loc)

using OTL = OptionalTensorList;
using SV = std::string_view;
using OptInt = std::optional<int64_t>;

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, bool sparse_grad,
              const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, const Tensor&, bool)>(OpId::gather, self, dim, index, sparse_grad);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
               const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&)>(OpId::scatter_src, self, dim, index,
                                                                            src);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
               const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, const Tensor&, const Scalar&)>(OpId::scatter_value, self, dim, index,
                                                                            value);
}
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const std::source_location& loc) {
  OPSPEC_SITE;
  return in_place<Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&)>(OpId::scatter__src, self, dim,
                                                                                index, src);
}
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                 const std::source_location& loc) {
  OPSPEC_SITE;
  return in_place<Tensor(const Tensor&, int64_t, const Tensor&, const Scalar&)>(OpId::scatter__value, self, dim,
                                                                                index, value);
}
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                   const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&)>(OpId::scatter_add, self, dim, index,
                                                                            src);
}
Tensor& scatter_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                     const std::source_location& loc) {
  OPSPEC_SITE;
  return in_place<Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&)>(OpId::scatter_add_, self, dim,
                                                                                index, src);
}
Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                      bool include_self, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&, SV, bool);
  return call<Sig>(OpId::scatter_reduce_two, self, dim, index, src, reduce, include_self);
}
Tensor& scatter_reduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                        bool include_self, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&, SV, bool);
  return in_place<Sig>(OpId::scatter_reduce__two, self, dim, index, src, reduce, include_self);
}
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const Tensor&, const Tensor&)>(OpId::masked_fill_Tensor, self, mask, value);
}
Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Tensor& value, const std::source_location& loc) {
  OPSPEC_SITE;
  return in_place<Tensor(const Tensor&, const Tensor&, const Tensor&)>(OpId::masked_fill__Tensor, self, mask, value);
}
Tensor masked_select(const Tensor& self, const Tensor& mask, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const Tensor&)>(OpId::masked_select, self, mask);
}
Tensor select_scatter(const Tensor& self, const Tensor& src, int64_t dim, int64_t index,
                      const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const Tensor&, int64_t, int64_t)>(OpId::select_scatter, self, src, dim, index);
}
Tensor slice_scatter(const Tensor& self, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                     std::optional<int64_t> end, int64_t step, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, int64_t, OptInt, OptInt, int64_t);
  return call<Sig>(OpId::slice_scatter, self, src, dim, start, end, step);
}
Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, int64_t, int64_t)>(OpId::diagonal, self, offset, dim1, dim2);
}
Tensor diagonal_backward(const Tensor& grad_output, IntArrayRef input_sizes, int64_t offset, int64_t dim1,
                         int64_t dim2, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, IntArrayRef, int64_t, int64_t, int64_t);
  return call<Sig>(OpId::diagonal_backward, grad_output, input_sizes, offset, dim1, dim2);
}
Tensor index(const Tensor& self, const std::vector<std::optional<Tensor>>& indices, const std::source_location& loc) {
  OPSPEC_SITE;
  const std::vector<Tensor> boxed = boxed_indices(indices);
  return call<Tensor(const Tensor&, OTL)>(OpId::index_Tensor, self, OTL{boxed});
}
Tensor& index_put_(Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                   bool accumulate, const std::source_location& loc) {
  OPSPEC_SITE;
  const std::vector<Tensor> boxed = boxed_indices(indices);
  return in_place<Tensor(const Tensor&, OTL, const Tensor&, bool)>(OpId::index_put_, self, OTL{boxed}, values,
                                                                    accumulate);
}
Tensor index_put(const Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                 bool accumulate, const std::source_location& loc) {
  OPSPEC_SITE;
  const std::vector<Tensor> boxed = boxed_indices(indices);
  return call<Tensor(const Tensor&, OTL, const Tensor&, bool)>(OpId::index_put, self, OTL{boxed}, values,
                                                               accumulate);
}
Tensor& _index_put_impl_(Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                         bool accumulate, bool unsafe, const std::source_location& loc) {
  OPSPEC_SITE;
  const std::vector<Tensor> boxed = boxed_indices(indices);
  return in_place<Tensor(const Tensor&, OTL, const Tensor&, bool, bool)>(OpId::_index_put_impl_, self, OTL{boxed},
                                                                          values, accumulate, unsafe);
}
Tensor nonzero(const Tensor& self, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&)>(OpId::nonzero, self);
}

}  // namespace opspec::ops
