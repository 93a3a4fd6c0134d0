// movement_meta.cc: See movement_meta.h.
#include "kernels/common/movement_meta.h"

#include <algorithm>
#include <cmath>

#include "kernels/common/layout_format.h"
#include "runtime/core/error.h"
#include "runtime/core/meta_stand_in.h"
#include "runtime/core/shape_utils.h"

namespace opspec::internal {

namespace {

std::vector<int64_t> identity_index(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

void check_floating(const Tensor& t, std::string_view op, std::string_view kernel) {
  OPSPEC_CHECK(is_floating(t.dtype()), op, ": \"", kernel, "\" not implemented for '", scalar_type_name(t.dtype()),
               "'");
}

// product_or_minus_one: a * b * c, or -1 when a factor is negative or the product overflows int64.
int64_t product_or_minus_one(int64_t a, int64_t b, int64_t c = 1) {
  int64_t p = 0;
  if (a < 0 || b < 0 || c < 0 || __builtin_mul_overflow(a, b, &p) || __builtin_mul_overflow(p, c, &p)) return -1;
  return p;
}

}  // namespace

GatherPlan make_gather_plan(IntArrayRef out_sizes, const std::vector<std::vector<int64_t>>& src_index,
                            IntArrayRef src_strides) {
  GatherPlan p;
  p.out_sizes.assign(out_sizes.begin(), out_sizes.end());
  for (size_t d = 0; d < out_sizes.size(); ++d) {
    p.offsets.push_back(static_cast<int64_t>(p.table.size()));
    for (const int64_t i : src_index[d]) {
      if (i < 0) {
        p.table.push_back(kPadEntry);
        p.has_pad = true;
      } else {
        p.table.push_back(i * src_strides[d]);
      }
    }
  }
  return p;
}

// ---- constant_pad_nd ----

SizeVec constant_pad_shape(const Tensor& self, IntArrayRef pad) {
  constexpr std::string_view kOp = "aten::constant_pad_nd";
  OPSPEC_CHECK(pad.size() % 2 == 0, kOp, ": Length of pad must be even but instead it equals ", pad.size());
  const int64_t l_inp = self.dim();
  const auto l_pad = static_cast<int64_t>(pad.size() / 2);
  OPSPEC_CHECK(l_inp >= l_pad, kOp,
               ": Length of pad should be no more than twice the number of dimensions of the input. Pad length is ",
               pad.size(), "while the input has ", l_inp, "dimensions.");
  const int64_t l_diff = l_inp - l_pad;
  SizeVec out(self.sizes().begin(), self.sizes().end());
  // PyTorch narrows the input by the negative pads first (narrow's check),
  // then sizes the output (2.x allows a zero size: torch/_refs' new_dim >= 0).
  for (int64_t i = l_diff; i < l_inp; ++i) {
    const auto pad_idx = static_cast<size_t>(2 * (l_inp - i - 1));
    int64_t size = self.size(i);
    for (const size_t k : {pad_idx, pad_idx + 1}) {
      if (pad[k] >= 0) continue;
      OPSPEC_CHECK(size + pad[k] >= 0, kOp, ": narrow(): length must be non-negative.");
      size += pad[k];
    }
  }
  for (int64_t i = 0; i < l_pad; ++i) {
    const auto pad_idx = static_cast<size_t>(static_cast<int64_t>(pad.size()) - (i + 1) * 2);
    const int64_t in = self.size(l_diff + i);
    int64_t new_dim = 0;
    const bool overflow = __builtin_add_overflow(in, pad[pad_idx], &new_dim) ||
                          __builtin_add_overflow(new_dim, pad[pad_idx + 1], &new_dim);
    OPSPEC_CHECK(!overflow, kOp, ": the input size ", in, " plus padding ", pad[pad_idx], " and ", pad[pad_idx + 1],
                 " overflows int64 in dimension ", l_diff + i);
    OPSPEC_CHECK(new_dim >= 0, kOp, ": The input size ", in, ", plus negative padding ", pad[pad_idx], " and ",
                 pad[pad_idx + 1], " resulted in a negative output size, which is invalid. Check dimension ",
                 l_diff + i, " of your input.");
    out[static_cast<size_t>(l_diff + i)] = new_dim;
  }
  return out;
}

SizeVec constant_pad_strides(const Tensor& self, IntArrayRef pad, IntArrayRef sizes) {
  if (std::any_of(pad.begin(), pad.end(), [](int64_t p) { return p > 0; })) {
    return strides_for(sizes, suggest_memory_format(self), "aten::constant_pad_nd");
  }
  // Only crops: the cropped view keeps self's strides, and its clone preserves them.
  if (is_non_overlapping_and_dense(sizes, self.strides())) return SizeVec(self.strides().begin(), self.strides().end());
  return infer_dense_strides(sizes, self.strides());
}

GatherPlan constant_pad_plan(const Tensor& self, IntArrayRef pad) {
  const SizeVec out = constant_pad_shape(self, pad);
  const int64_t l_inp = self.dim();
  const int64_t l_diff = l_inp - static_cast<int64_t>(pad.size() / 2);
  std::vector<std::vector<int64_t>> idx(static_cast<size_t>(l_inp));
  for (int64_t d = 0; d < l_inp; ++d) {
    const int64_t before = d >= l_diff ? pad[static_cast<size_t>(2 * (l_inp - d - 1))] : 0;
    const int64_t in = self.size(d);
    auto& v = idx[static_cast<size_t>(d)];
    v.resize(static_cast<size_t>(out[static_cast<size_t>(d)]));
    for (int64_t o = 0; o < out[static_cast<size_t>(d)]; ++o) {
      const int64_t i = o - before;  // a negative `before` crops: i starts past the cut
      v[static_cast<size_t>(o)] = i >= 0 && i < in ? i : -1;
    }
  }
  return make_gather_plan(out, idx, self.strides());
}

// ---- flip, roll, repeat ----

std::vector<bool> flip_mask(const Tensor& self, IntArrayRef dims) {
  constexpr std::string_view kOp = "aten::flip";
  std::vector<bool> mask(static_cast<size_t>(std::max<int64_t>(self.dim(), 1)), false);
  for (const int64_t d : dims) {
    const int64_t w = wrap_dim(d, self.dim(), kOp);
    OPSPEC_CHECK(!mask[static_cast<size_t>(w)], kOp, ": dim ", w, " appears multiple times in the list of dims");
    mask[static_cast<size_t>(w)] = true;
  }
  return mask;
}

GatherPlan flip_plan(const Tensor& self, IntArrayRef dims) {
  const std::vector<bool> mask = flip_mask(self, dims);
  std::vector<std::vector<int64_t>> idx;
  for (int64_t d = 0; d < self.dim(); ++d) {
    const int64_t n = self.size(d);
    std::vector<int64_t> v = identity_index(n);
    if (mask[static_cast<size_t>(d)]) {
      for (int64_t o = 0; o < n; ++o) v[static_cast<size_t>(o)] = n - 1 - o;
    }
    idx.push_back(std::move(v));
  }
  return make_gather_plan(self.sizes(), idx, self.strides());
}

void check_roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  constexpr std::string_view kOp = "aten::roll";
  OPSPEC_CHECK(!shifts.empty(), kOp, ": `shifts` required");
  if (dims.empty() && shifts.size() == 1) return;  // the flattened roll
  OPSPEC_CHECK(shifts.size() == dims.size(), kOp, ": shifts and dimensions must align. shifts: ", shifts.size(),
               ", dims:", dims.size());
  // PyTorch's roll reads self.size(dim) per rolled dim, which a 0-dim self has not.
  OPSPEC_CHECK(self.dim() > 0, kOp, ": Dimension specified as ", dims[0], " but tensor has no dimensions");
  for (const int64_t d : dims) wrap_dim(d, self.dim(), kOp);
}

GatherPlan roll_plan(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  std::vector<std::vector<int64_t>> idx;
  for (int64_t d = 0; d < self.dim(); ++d) idx.push_back(identity_index(self.size(d)));
  // PyTorch rolls dim after dim (roll_common recurses), so a repeated dim adds up.
  for (size_t k = 0; k < dims.size() && self.dim() > 0; ++k) {
    const int64_t d = wrap_dim(dims[k], self.dim(), "aten::roll");
    const int64_t n = self.size(d);
    if (n == 0) continue;
    auto& v = idx[static_cast<size_t>(d)];
    const int64_t s = ((shifts[k] % n) + n) % n;
    std::vector<int64_t> rolled(v.size());
    for (int64_t o = 0; o < n; ++o) rolled[static_cast<size_t>(o)] = v[static_cast<size_t>((o - s + n) % n)];
    v = std::move(rolled);
  }
  return make_gather_plan(self.sizes(), idx, self.strides());
}

SizeVec repeat_shape(const Tensor& self, IntArrayRef repeats) {
  constexpr std::string_view kOp = "aten::repeat";
  OPSPEC_CHECK(static_cast<int64_t>(repeats.size()) >= self.dim(), kOp,
               ": Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  const size_t lead = repeats.size() - static_cast<size_t>(self.dim());
  SizeVec out(repeats.size());
  for (size_t d = 0; d < repeats.size(); ++d) {
    const int64_t in = d < lead ? 1 : self.size(static_cast<int64_t>(d - lead));
    OPSPEC_CHECK(!__builtin_mul_overflow(in, repeats[d], &out[d]), kOp, ": size ", in, " repeated ", repeats[d],
                 " times overflows int64 in dimension ", d);
  }
  for (const int64_t s : out) {
    OPSPEC_CHECK(s >= 0, kOp, ": Trying to create tensor with negative dimension ", s, ": ", format_sizes(out));
  }
  return out;
}

GatherPlan repeat_plan(const Tensor& self, IntArrayRef repeats) {
  const SizeVec out = repeat_shape(self, repeats);
  const size_t lead = repeats.size() - static_cast<size_t>(self.dim());
  SizeVec strides(repeats.size(), 0);
  std::vector<std::vector<int64_t>> idx(repeats.size());
  for (size_t d = 0; d < repeats.size(); ++d) {
    const int64_t in = d < lead ? 1 : self.size(static_cast<int64_t>(d - lead));
    if (d >= lead) strides[d] = self.stride(static_cast<int64_t>(d - lead));
    auto& v = idx[d];
    v.resize(static_cast<size_t>(out[d]));
    for (int64_t o = 0; o < out[d]; ++o) v[static_cast<size_t>(o)] = o % in;
  }
  return make_gather_plan(out, idx, strides);
}

// ---- upsample_nearest2d ----

std::array<int64_t, 4> upsample_2d_common_check(IntArrayRef input_size, IntArrayRef output_size,
                                                std::string_view op) {
  OPSPEC_CHECK(output_size.size() == 2, op, ": It is expected output_size equals to 2, but got size ",
               output_size.size());
  OPSPEC_CHECK(input_size.size() == 4, op, ": It is expected input_size equals to 4, but got size ",
               input_size.size());
  const int64_t ih = input_size[2], iw = input_size[3], oh = output_size[0], ow = output_size[1];
  OPSPEC_CHECK(ih > 0 && iw > 0 && oh > 0 && ow > 0, op,
               ": Input and output sizes should be greater than 0, but got input (H: ", ih, ", W: ", iw,
               ") output (H: ", oh, ", W: ", ow, ")");
  return {input_size[0], input_size[1], oh, ow};
}

std::array<int64_t, 4> upsample_nearest2d_shape(const Tensor& input, IntArrayRef output_size) {
  constexpr std::string_view kOp = "aten::upsample_nearest2d";
  const std::array<int64_t, 4> out = upsample_2d_common_check(input.sizes(), output_size, kOp);
  // An empty batch is allowed, no other empty dim.
  OPSPEC_CHECK(input.numel() != 0 || input.size(1) * input.size(2) * input.size(3) != 0, kOp,
               ": Non-empty 4D data tensor expected but got a tensor with sizes ", format_sizes(input.sizes()));
  check_floating(input, kOp, "upsample_nearest2d");
  return out;
}

void check_upsample_nearest2d_backward(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size) {
  constexpr std::string_view kOp = "aten::upsample_nearest2d_backward";
  const std::array<int64_t, 4> full = upsample_2d_common_check(input_size, output_size, kOp);
  OPSPEC_CHECK(grad_output.dim() == 4, kOp, ": Expected grad_output to be a tensor of dimension 4 but got: dimension ",
               grad_output.dim());
  for (int64_t i = 0; i < 4; ++i) {
    OPSPEC_CHECK(grad_output.size(i) == full[static_cast<size_t>(i)], kOp,
                 ": Expected grad_output to have the same shape as output; output.size(", i, ") = ",
                 full[static_cast<size_t>(i)], " but got grad_output.size(", i, ") = ", grad_output.size(i));
  }
  check_floating(grad_output, kOp, "upsample_nearest2d_backward");
}

std::vector<int64_t> nearest_indices(int64_t in_size, int64_t out_size, std::optional<double> scale) {
  std::vector<int64_t> v(static_cast<size_t>(out_size));
  // PyTorch's nearest_idx: exact paths for scale 1 and 2, float math otherwise.
  const float s = scale.has_value() && *scale > 0. ? static_cast<float>(1.0 / *scale)
                                                   : static_cast<float>(in_size) / static_cast<float>(out_size);
  for (int64_t o = 0; o < out_size; ++o) {
    int64_t i = 0;
    if (out_size == in_size) {
      i = o;
    } else if (out_size == 2 * in_size) {
      i = o >> 1;
    } else {
      i = std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * s)), in_size - 1);
    }
    v[static_cast<size_t>(o)] = i;
  }
  return v;
}

GatherPlan upsample_nearest2d_plan(const Tensor& input, IntArrayRef output_size, std::optional<double> scales_h,
                                   std::optional<double> scales_w) {
  const std::array<int64_t, 4> out = upsample_nearest2d_shape(input, output_size);
  std::vector<std::vector<int64_t>> idx = {identity_index(out[0]), identity_index(out[1]),
                                           nearest_indices(input.size(2), out[2], scales_h),
                                           nearest_indices(input.size(3), out[3], scales_w)};
  return make_gather_plan(out, idx, input.strides());
}

std::vector<int64_t> nearest_source_ranges(int64_t in_size, int64_t out_size, std::optional<double> scale) {
  const std::vector<int64_t> src = nearest_indices(in_size, out_size, scale);
  std::vector<int64_t> ranges(static_cast<size_t>(2 * in_size), 0);
  // src is non-decreasing: the outputs of input i are one run; empty runs sit where the next starts.
  int64_t o = 0;
  for (int64_t i = 0; i < in_size; ++i) {
    ranges[static_cast<size_t>(2 * i)] = o;
    while (o < out_size && src[static_cast<size_t>(o)] == i) ++o;
    ranges[static_cast<size_t>(2 * i + 1)] = o;
  }
  return ranges;
}

// ---- group norm ----

GroupNormGeometry group_norm_geometry(const Tensor& input, const std::optional<Tensor>& weight,
                                      const std::optional<Tensor>& bias, int64_t N, int64_t C, int64_t HxW,
                                      int64_t group, std::string_view op) {
  const std::string in_sizes = format_sizes(input.sizes());
  OPSPEC_CHECK(group > 0, op, ": Expected num groups to be greater than 0, got ", group);
  // The statistics are [N, group]: PyTorch's empty() refuses a negative N even for an empty input.
  OPSPEC_CHECK(N >= 0, op, ": Trying to create tensor with negative dimension ", N, ": [", N, ", ", group, "]");
  OPSPEC_CHECK(C % group == 0, op,
               ": Expected number of channels in input to be divisible by num_groups, but got input of shape ",
               in_sizes, " and num_groups=", group);
  const std::string w_sizes = weight ? format_sizes(weight->sizes()) : "[0]";
  OPSPEC_CHECK(!weight || (weight->dim() == 1 && weight->numel() == C), op,
               ": Expected weight to be a vector of size equal to the number of channels in input, but got weight "
               "of shape ", w_sizes, " and input of shape ", in_sizes);
  // PyTorch prints weight's shape in the bias message too.
  OPSPEC_CHECK(!bias || (bias->dim() == 1 && bias->numel() == C), op,
               ": Expected bias to be a vector of size equal to the number of channels in input, but got bias of "
               "shape ", w_sizes, " and input of shape ", in_sizes);
  check_floating(input, op, "GroupNormKernelImpl");
  const Tensor all[] = {input, weight ? *weight : Tensor(), bias ? *bias : Tensor()};
  check_same_device(all, op);
  // Mixed types (PyTorch's is_mixed_type): a reduced float input with float parameters keeps float statistics.
  const bool reduced = input.dtype() == DType::kFloat16 || input.dtype() == DType::kBFloat16;
  const bool mixed = reduced && ((weight && weight->dtype() == DType::kFloat32) ||
                                 (bias && bias->dtype() == DType::kFloat32));
  for (const std::optional<Tensor>* p : {&weight, &bias}) {
    if (!*p) continue;
    const DType want = mixed ? DType::kFloat32 : input.dtype();
    OPSPEC_CHECK((*p)->dtype() == want, op,
                 mixed ? ": mixed dtype (CPU): expect parameter to have scalar type of Float"
                       : ": expected scalar type ",
                 mixed ? "" : scalar_type_name(want), mixed ? "" : " but found ",
                 mixed ? "" : scalar_type_name((*p)->dtype()));
  }
  if (input.numel() != 0) {
    OPSPEC_CHECK(input.numel() == product_or_minus_one(N, C, HxW), op,
                 ": Expected X.numel() == N * C * HxW to be true, but got false.  (Could this error message be "
                 "improved?  If so, please report an enhancement request to PyTorch.)");
  }
  return {N, C, HxW, group, mixed ? DType::kFloat32 : input.dtype()};
}

DType check_group_norm_backward(const Tensor& grad_out, const Tensor& input, const Tensor& mean, const Tensor& rstd,
                                const std::optional<Tensor>& weight, int64_t N, int64_t C, int64_t HxW,
                                int64_t group) {
  constexpr std::string_view kOp = "aten::native_group_norm_backward";
  OPSPEC_CHECK(input.dtype() == grad_out.dtype(), kOp, ": Expected scalar types of X and dY are same.");
  check_floating(input, kOp, "GroupNormBackwardKernelImpl");
  const Tensor all[] = {grad_out, input, mean, rstd, weight ? *weight : Tensor()};
  check_same_device(all, kOp);
  const auto assert_true = [&](bool ok, std::string_view what) {
    OPSPEC_CHECK(ok, kOp, ": Expected ", what,
                 " to be true, but got false.  (Could this error message be improved?  If so, please report an "
                 "enhancement request to PyTorch.)");
  };
  OPSPEC_CHECK(group > 0 && C % group == 0, kOp, ": Expected number of channels in input to be divisible by "
               "num_groups, but got input of shape ", format_sizes(input.sizes()), " and num_groups=", group);
  if (input.numel() == 0) return weight ? weight->dtype() : input.dtype();
  assert_true(grad_out.numel() == product_or_minus_one(N, C, HxW), "dY.numel() == N * C * HxW");
  assert_true(input.numel() == product_or_minus_one(N, C, HxW), "X.numel() == N * C * HxW");
  assert_true(mean.numel() == product_or_minus_one(N, group), "mean.numel() == N * group");
  assert_true(rstd.numel() == product_or_minus_one(N, group), "rstd.numel() == N * group");
  assert_true(!weight || weight->numel() == C, "!gamma.defined() || gamma.numel() == C");
  return weight ? weight->dtype() : input.dtype();
}

// ---- Meta kernels ----

Tensor constant_pad_nd_meta(const Tensor& self, IntArrayRef pad, const Scalar&) {
  const SizeVec sizes = constant_pad_shape(self, pad);
  return make_strided(sizes, constant_pad_strides(self, pad, sizes), self.dtype(), kMeta);
}

Tensor upsample_nearest2d_meta(const Tensor& self, IntArrayRef output_size, std::optional<double>,
                               std::optional<double>) {
  return meta_in_format(upsample_nearest2d_shape(self, output_size), self.dtype(), suggest_memory_format(self),
                        "aten::upsample_nearest2d");
}

Tensor upsample_nearest2d_backward_meta(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                        std::optional<double>, std::optional<double>) {
  check_upsample_nearest2d_backward(grad_output, output_size, input_size);
  return meta_in_format(input_size, grad_output.dtype(), suggest_memory_format(grad_output),
                        "aten::upsample_nearest2d_backward");
}

std::tuple<Tensor, Tensor, Tensor> native_group_norm_meta(const Tensor& input, const std::optional<Tensor>& weight,
                                                          const std::optional<Tensor>& bias, int64_t N, int64_t C,
                                                          int64_t HxW, int64_t group, double) {
  const GroupNormGeometry g = group_norm_geometry(input, weight, bias, N, C, HxW, group, "aten::native_group_norm");
  // Y in X's suggested format, as the CPU's; row-major standing in for CUDA (Note
  // [Meta kernels standing in for a device]), as 2.x's CUDA kernel (X made contiguous).
  const MemoryFormat y_format =
      meta_stand_in_device().is_cuda() ? MemoryFormat::kContiguous : suggest_memory_format(input);
  return {meta_in_format(input.sizes(), input.dtype(), y_format, "aten::native_group_norm"),
          make_tensor({N, group}, g.stat_dtype, kMeta),
          make_tensor({N, group}, g.stat_dtype, kMeta)};
}

std::tuple<Tensor, Tensor, Tensor> native_group_norm_backward_meta(const Tensor& grad_out, const Tensor& input,
                                                                   const Tensor& mean, const Tensor& rstd,
                                                                   const std::optional<Tensor>& weight, int64_t N,
                                                                   int64_t C, int64_t HxW, int64_t group,
                                                                   std::array<bool, 3> output_mask) {
  const DType pdt = check_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group);
  // dX in X's suggested format, as the CPU's (PyTorch 2.x); row-major standing in for CUDA,
  // as its CUDA kernel. See Notes [Model op layouts], [Meta kernels standing in for a device].
  const MemoryFormat dx_format =
      meta_stand_in_device().is_cuda() ? MemoryFormat::kContiguous : suggest_memory_format(input);
  return {output_mask[0] ? meta_in_format(input.sizes(), input.dtype(), dx_format, "aten::native_group_norm_backward")
                         : Tensor(),
          output_mask[1] ? make_tensor({C}, pdt, kMeta) : Tensor(),
          output_mask[2] ? make_tensor({C}, pdt, kMeta) : Tensor()};
}

Tensor flip_meta(const Tensor& self, IntArrayRef dims) {
  flip_mask(self, dims);
  return make_strided(self.sizes(), preserve_strides(self), self.dtype(), kMeta);  // empty_like(self) in PyTorch
}

SizeVec roll_strides(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  if (self.numel() == 0) return preserve_strides(self);
  const IntArrayRef sizes = self.sizes();
  if (dims.empty()) return strides_for(sizes, MemoryFormat::kContiguous, "aten::roll");
  SizeVec strides(self.strides().begin(), self.strides().end());
  for (size_t i = 0; i < dims.size(); ++i) {
    const auto d = static_cast<size_t>(wrap_dim(dims[i], self.dim(), "aten::roll"));
    const int64_t n = sizes[d];
    const int64_t start = ((n - shifts[i]) % n + n) % n;
    SizeVec piece(sizes.begin(), sizes.end());
    piece[d] = n - start;
    const MemoryFormat first = suggest_memory_format(piece, strides);
    piece[d] = start;
    const MemoryFormat second = suggest_memory_format(piece, strides);
    strides = strides_for(sizes, first == second ? first : MemoryFormat::kContiguous, "aten::roll");
  }
  return strides;
}

// roll_meta: the CPU's layout, so a fake cpu tensor has the real one's
// strides (2.x's meta, the Python ref's index_select, is row-major); standing
// in for CUDA (Note [Meta kernels standing in for a device]) roll_cuda's row-major.
Tensor roll_meta(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  check_roll(self, shifts, dims);
  if (meta_stand_in_device().is_cuda()) return make_tensor(self.sizes(), self.dtype(), kMeta);
  return make_strided(self.sizes(), roll_strides(self, shifts, dims), self.dtype(), kMeta);
}

Tensor repeat_meta(const Tensor& self, IntArrayRef repeats) {
  return make_tensor(repeat_shape(self, repeats), self.dtype(), kMeta);
}

}  // namespace opspec::internal
