// ops_movement.cc: the public API of the padding, upsampling, group norm and
// data-movement ops (constant_pad_nd, upsample_nearest2d, group_norm, flip,
// roll, repeat, unflatten, movedim); see ops.h.
#include "runtime/core/call_site.h"
#include "runtime/ops/internal/call.h"
#include "runtime/ops/op_table.h"
#include "runtime/ops/ops.h"

namespace opspec::ops {
namespace {

using OptTensor = std::optional<Tensor>;
using OptDouble = std::optional<double>;

using internal::call;  // runtime/ops/internal/call.h

}  // namespace

#define OPSPEC_SITE CallSiteScope site_scope_(loc)

Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, const Scalar& value, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, IntArrayRef, const Scalar&)>(OpId::constant_pad_nd, self, pad, value);
}
Tensor upsample_nearest2d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_h,
                          std::optional<double> scales_w, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, IntArrayRef, OptDouble, OptDouble);
  return call<Sig>(OpId::upsample_nearest2d, self, output_size, scales_h, scales_w);
}
Tensor upsample_nearest2d_vec(const Tensor& input, OptionalIntArrayRef output_size,
                              const std::optional<std::vector<double>>& scale_factors,
                              const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, OptionalIntArrayRef, const std::optional<std::vector<double>>&);
  return call<Sig>(OpId::upsample_nearest2d_vec, input, output_size, scale_factors);
}
Tensor upsample_nearest2d_backward(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                   std::optional<double> scales_h, std::optional<double> scales_w,
                                   const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, IntArrayRef, IntArrayRef, OptDouble, OptDouble);
  return call<Sig>(OpId::upsample_nearest2d_backward, grad_output, output_size, input_size, scales_h, scales_w);
}
Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps, bool cudnn_enabled,
                  const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, int64_t, const OptTensor&, const OptTensor&, double, bool);
  return call<Sig>(OpId::group_norm, input, num_groups, weight, bias, eps, cudnn_enabled);
}
std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input, const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, int64_t N, int64_t C,
                                                     int64_t HxW, int64_t group, double eps,
                                                     const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const OptTensor&, const OptTensor&, int64_t, int64_t,
                                                 int64_t, int64_t, double);
  return call<Sig>(OpId::native_group_norm, input, weight, bias, N, C, HxW, group, eps);
}
std::tuple<Tensor, Tensor, Tensor> native_group_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              const Tensor& mean, const Tensor& rstd,
                                                              const std::optional<Tensor>& weight, int64_t N,
                                                              int64_t C, int64_t HxW, int64_t group,
                                                              std::array<bool, 3> output_mask,
                                                              const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                                 const OptTensor&, int64_t, int64_t, int64_t, int64_t,
                                                 std::array<bool, 3>);
  return call<Sig>(OpId::native_group_norm_backward, grad_out, input, mean, rstd, weight, N, C, HxW, group,
                   output_mask);
}
Tensor flip(const Tensor& self, IntArrayRef dims, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, IntArrayRef)>(OpId::flip, self, dims);
}
Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, IntArrayRef, IntArrayRef)>(OpId::roll, self, shifts, dims);
}
Tensor repeat(const Tensor& self, IntArrayRef repeats, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, IntArrayRef)>(OpId::repeat, self, repeats);
}
Tensor unflatten(const Tensor& self, int64_t dim, IntArrayRef sizes, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, IntArrayRef)>(OpId::unflatten_int, self, dim, sizes);
}
Tensor movedim(const Tensor& self, IntArrayRef source, IntArrayRef destination, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, IntArrayRef, IntArrayRef)>(OpId::movedim_intlist, self, source, destination);
}
Tensor movedim(const Tensor& self, int64_t source, int64_t destination, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, int64_t)>(OpId::movedim_int, self, source, destination);
}

}  // namespace opspec::ops
