// decompositions_movement.cc: the CompositeImplicit kernels of
// upsample_nearest2d.vec, group_norm, unflatten.int and movedim.int /
// movedim.intlist, op for op as PyTorch 2.x's C++ (See Note [Composite
// decompositions] in decompositions.cc): upsample_nearest2d.vec sizes the
// output and calls upsample_nearest2d; group_norm checks and calls
// native_group_norm; unflatten is a view; movedim a permute (an alias for 0-dim).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "absl/strings/str_join.h"
#include "runtime/core/error.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/op_table.h"
#include "runtime/ops/ops.h"

namespace opspec::internal {
namespace {

using OptTensor = std::optional<Tensor>;

std::string list_str(IntArrayRef v) { return str_cat("[", absl::StrJoin(v, ", "), "]"); }

// ---- upsample_nearest2d.vec ----

// upsample_output_size: PyTorch's upsample::compute_output_size: output_size
// as given, or each spatial size times its scale factor, truncated.
SizeVec upsample_output_size(IntArrayRef input_size, const Value& output_size, const Value& scale_factors) {
  constexpr std::string_view kOp = "aten::upsample_nearest2d.vec";
  const int64_t spatial = static_cast<int64_t>(input_size.size()) - 2;
  const bool has_size = !output_size.is_none(), has_scales = !scale_factors.is_none();
  OPSPEC_CHECK(has_size != has_scales, kOp, ": Must specify exactly one of output_size and scale_factors");
  if (has_size) {
    const std::vector<int64_t>& s = output_size.to_int_list();
    OPSPEC_CHECK(static_cast<int64_t>(s.size()) == spatial, kOp,
                 ": Expected static_cast<int64_t>(output_size->size()) == spatial_dimensions to be true, but got "
                 "false.  (Could this error message be improved?  If so, please report an enhancement request to "
                 "PyTorch.)");
    return SizeVec(s.begin(), s.end());
  }
  const std::vector<double>& f = scale_factors.to_double_list();
  OPSPEC_CHECK(static_cast<int64_t>(f.size()) == spatial, kOp,
               ": Expected static_cast<int64_t>(scale_factors->size()) == spatial_dimensions to be true, but got "
               "false.  (Could this error message be improved?  If so, please report an enhancement request to "
               "PyTorch.)");
  SizeVec out;
  for (int64_t i = 0; i < spatial; ++i) {
    const double odim = static_cast<double>(input_size[static_cast<size_t>(i + 2)]) * f[static_cast<size_t>(i)];
    OPSPEC_CHECK(std::isfinite(odim) && odim >= -9.2e18 && odim <= 9.2e18, kOp, ": value cannot be converted to type "
                 "int64_t without overflow");
    out.push_back(static_cast<int64_t>(odim));
  }
  return out;
}

// upsample_nearest2d.vec (input, output_size?, scale_factors?): boxed, as the
// float[]? argument has no unboxed type. The scales passed on are the given
// factors (get_scale_value), so the kernel uses 1 / factor, not in / out.
void upsample_nearest2d_vec_kernel(const OperatorHandle&, DispatchKeySet, Stack& stack) {
  const Tensor input = stack.at(0).to_tensor();
  const SizeVec osize = upsample_output_size(input.sizes(), stack.at(1), stack.at(2));
  std::optional<double> scale_h, scale_w;
  // Fewer than two factors only matched an input of fewer than four dims: the kernel refuses its sizes.
  if (!stack.at(2).is_none() && stack.at(2).to_double_list().size() == 2) {
    scale_h = stack.at(2).to_double_list()[0];
    scale_w = stack.at(2).to_double_list()[1];
  }
  Tensor out = ops::upsample_nearest2d(input, osize, scale_h, scale_w);
  stack.clear();
  stack.emplace_back(std::move(out));
}

// ---- group_norm ----

// group_norm: PyTorch's: N and C are sizes 0 and 1, check_group_norm_inputs,
// HxW the product of the rest, then native_group_norm's output.
Tensor group_norm_kernel(const Tensor& input, int64_t num_groups, const OptTensor& weight, const OptTensor& bias,
                         double eps, bool) {
  constexpr std::string_view kOp = "aten::group_norm";
  const int64_t N = input.size(0);
  const int64_t C = input.size(1);
  const std::string in_sizes = format_sizes(input.sizes());
  OPSPEC_CHECK(num_groups > 0, kOp, ": Expected num groups to be greater than 0, got ", num_groups);
  OPSPEC_CHECK(C % num_groups == 0, kOp,
               ": Expected number of channels in input to be divisible by num_groups, but got input of shape ",
               in_sizes, " and num_groups=", num_groups);
  const std::string w_sizes = weight ? format_sizes(weight->sizes()) : "[0]";
  OPSPEC_CHECK(!weight || (weight->dim() == 1 && weight->numel() == C), kOp,
               ": Expected weight to be a vector of size equal to the number of channels in input, but got weight "
               "of shape ", w_sizes, " and input of shape ", in_sizes);
  OPSPEC_CHECK(!bias || (bias->dim() == 1 && bias->numel() == C), kOp,
               ": Expected bias to be a vector of size equal to the number of channels in input, but got bias of "
               "shape ", w_sizes, " and input of shape ", in_sizes);
  int64_t hxw = 1;
  for (int64_t d = 2; d < input.dim(); ++d) hxw *= input.size(d);
  return std::get<0>(ops::native_group_norm(input, weight, bias, N, C, hxw, num_groups, eps));
}

// ---- unflatten, movedim ----

// unflatten.int: PyTorch's unflatten_impl: sizes (one -1 inferred) replace
// dim, then a view; infer_size's failures reworded as PyTorch rewords them.
Tensor unflatten_kernel(const Tensor& self, int64_t dim, IntArrayRef sizes) {
  constexpr std::string_view kOp = "aten::unflatten";
  const int64_t d = wrap_dim(dim, self.dim(), kOp);
  OPSPEC_CHECK(!sizes.empty(), kOp, ": unflatten: sizes must be non-empty");
  const int64_t numel = self.dim() == 0 ? 1 : self.size(d);
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      OPSPEC_CHECK(infer_at < 0, kOp, ": unflatten got an unexpected error:\nonly one dimension can be inferred");
      infer_at = static_cast<int64_t>(i);
    } else {
      OPSPEC_CHECK(sizes[i] >= 0, kOp, ": unflatten got an unexpected error:\ninvalid shape dimension ", sizes[i]);
      known *= sizes[i];
    }
  }
  SizeVec inferred(sizes.begin(), sizes.end());
  const bool fits = infer_at >= 0 ? (known != 0 && numel % known == 0) : known == numel;
  OPSPEC_CHECK(fits, kOp, ": unflatten: Provided sizes ", list_str(sizes), " don't multiply up to the size of dim ",
               d, " (", numel, ") in the input tensor");
  if (infer_at >= 0) inferred[static_cast<size_t>(infer_at)] = numel / known;
  SizeVec shape(self.sizes().begin(), self.sizes().end());
  if (self.dim() == 0) {
    shape = inferred;
  } else {
    shape.erase(shape.begin() + d);
    shape.insert(shape.begin() + d, inferred.begin(), inferred.end());
  }
  return ops::view(self, shape);
}

// movedim.intlist: PyTorch's movedim: the moved dims take their destinations,
// the rest fill the free positions in order; a permute (alias for 0-dim).
Tensor movedim_kernel(const Tensor& self, IntArrayRef src, IntArrayRef dst) {
  constexpr std::string_view kOp = "aten::movedim";
  OPSPEC_CHECK(src.size() == dst.size(), kOp, ": movedim: Invalid source or destination dims: source (",
               list_str(src), " dims) should contain the same number of dims as destination (", list_str(dst),
               " dims)");
  const int64_t n = self.dim();
  SizeVec ns, nd;
  for (const int64_t s : src) ns.push_back(wrap_dim(s, n, kOp));
  for (const int64_t s : dst) nd.push_back(wrap_dim(s, n, kOp));
  const auto all_unique = [](SizeVec v) {
    std::sort(v.begin(), v.end());
    return std::adjacent_find(v.begin(), v.end()) == v.end();
  };
  OPSPEC_CHECK(all_unique(ns), kOp, ": movedim: repeated dim in `source` (", list_str(src), ")");
  OPSPEC_CHECK(all_unique(nd), kOp, ": movedim: repeated dim in `destination` (", list_str(dst), ")");
  if (n == 0) return ops::alias(self);
  SizeVec order(static_cast<size_t>(n), -1), rest_src, rest_dst;
  std::vector<bool> src_used(static_cast<size_t>(n), false), dst_used(static_cast<size_t>(n), false);
  for (size_t i = 0; i < ns.size(); ++i) {
    order[static_cast<size_t>(nd[i])] = ns[i];
    src_used[static_cast<size_t>(ns[i])] = true;
    dst_used[static_cast<size_t>(nd[i])] = true;
  }
  for (int64_t i = 0; i < n; ++i) {
    if (!src_used[static_cast<size_t>(i)]) rest_src.push_back(i);
    if (!dst_used[static_cast<size_t>(i)]) rest_dst.push_back(i);
  }
  for (size_t i = 0; i < rest_src.size(); ++i) order[static_cast<size_t>(rest_dst[i])] = rest_src[i];
  return ops::permute(self, order);
}

// movedim.int: PyTorch's at::movedim(self, {src}, {dst}), the intlist overload dispatched.
Tensor movedim_int_kernel(const Tensor& self, int64_t src, int64_t dst) {
  const int64_t s[] = {src}, d[] = {dst};
  return ops::movedim(self, IntArrayRef(s), IntArrayRef(d));
}

}  // namespace

void register_movement_decompositions(Dispatcher& d) {
  Library lib("aten", d);
  constexpr DispatchKey kKey = DispatchKey::kCompositeImplicit;
  lib.impl_boxed("upsample_nearest2d.vec", kKey, &upsample_nearest2d_vec_kernel);
  lib.impl("group_norm", kKey, &group_norm_kernel)
      .impl("unflatten.int", kKey, &unflatten_kernel)
      .impl("movedim.intlist", kKey, &movedim_kernel)
      .impl("movedim.int", kKey, &movedim_int_kernel);
}

}  // namespace opspec::internal
