// movement_meta.h: shape, dtype and device rules of the padding, upsampling,
// group norm and data-movement ops (constant_pad_nd, upsample_nearest2d and
// its backward, native_group_norm and its backward, flip, roll, repeat),
// shared by their CPU, CUDA and Meta kernels, plus the Meta kernels and the
// gather plans every backend runs. Error texts are PyTorch's, prefixed with the op.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "runtime/core/tensor.h"
#include "runtime/dispatch/boxing.h"
#include "runtime/dispatch/dispatcher.h"

namespace opspec::internal {

// Note [Separable gathers]
// constant_pad_nd, flip, roll, repeat and upsample_nearest2d all copy
// out[o_0, ..., o_k] = in[i_0(o_0), ..., i_k(o_k)]: each output index picks
// its input index along the same dim on its own. A GatherPlan holds one table
// per dim, already multiplied by the input's stride (so any input layout
// works without a contiguous copy), with kPadEntry where the output element
// is padding. Every backend runs the same plan: the CPU row by row with whole
// runs memcpy'd, CUDA one thread per element with the tables on the device.
// Copies are by element size, so every dtype takes the same path.

// kPadEntry: a table entry whose output element takes the fill value.
inline constexpr int64_t kPadEntry = std::numeric_limits<int64_t>::min();

// GatherPlan: out (contiguous, out_sizes) from a strided input by per-dim tables.
struct GatherPlan {
  SizeVec out_sizes;
  std::vector<int64_t> table;    // dim d's out_sizes[d] entries start at offsets[d]
  std::vector<int64_t> offsets;  // one per dim
  bool has_pad = false;          // some entry is kPadEntry
};

// make_gather_plan: the plan for per-dim input indices src_index[d] (-1 for
// padding) into an input with strides src_strides (elements).
GatherPlan make_gather_plan(IntArrayRef out_sizes, const std::vector<std::vector<int64_t>>& src_index,
                            IntArrayRef src_strides);

// constant_pad_shape: PyTorch's checks of constant_pad_nd and its result sizes.
SizeVec constant_pad_shape(const Tensor& self, IntArrayRef pad);
// constant_pad_strides: the layout of constant_pad_nd's result of sizes: with
// no positive pad PyTorch clones the cropped input (preserve_format of self's
// strides at those sizes), else self's suggested memory format (See Note
// [Model op layouts] in kernels/common/layout_format.h).
SizeVec constant_pad_strides(const Tensor& self, IntArrayRef pad, IntArrayRef sizes);
// constant_pad_plan: self padded (or cropped, for negative pads).
GatherPlan constant_pad_plan(const Tensor& self, IntArrayRef pad);

// flip_mask: which dims flip reverses (wrapped; a repeated dim is an error).
std::vector<bool> flip_mask(const Tensor& self, IntArrayRef dims);
// flip_plan: self with the masked dims reversed.
GatherPlan flip_plan(const Tensor& self, IntArrayRef dims);

// check_roll: PyTorch's checks of roll's shifts and dims.
void check_roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims);
// roll_plan: self rolled by shifts[i] along dims[i] (dims not empty; a
// flattened roll runs this on a 1-D view of a contiguous copy).
GatherPlan roll_plan(const Tensor& self, IntArrayRef shifts, IntArrayRef dims);

// repeat_shape: the sizes of self.repeat(repeats) (checked).
SizeVec repeat_shape(const Tensor& self, IntArrayRef repeats);
// repeat_plan: self tiled, leading repeats adding dims.
GatherPlan repeat_plan(const Tensor& self, IntArrayRef repeats);

// upsample_2d_common_check: PyTorch's: output_size has 2 values, input_size
// 4, all spatial sizes positive; returns [N, C, OH, OW].
std::array<int64_t, 4> upsample_2d_common_check(IntArrayRef input_size, IntArrayRef output_size, std::string_view op);
// upsample_nearest2d_shape: the common check, then a non-empty input (an
// empty batch is allowed).
std::array<int64_t, 4> upsample_nearest2d_shape(const Tensor& input, IntArrayRef output_size);
// check_upsample_nearest2d_backward: the common check of (input_size,
// output_size) and grad_output shaped as the forward's output.
void check_upsample_nearest2d_backward(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size);
// nearest_indices: PyTorch's nearest_idx for each of out_size output indices:
// the same index when sizes agree, o >> 1 when out is twice in, else
// min(floor(o * scale), in - 1) in float, scale = 1 / scale when given and
// positive, else in / out.
std::vector<int64_t> nearest_indices(int64_t in_size, int64_t out_size, std::optional<double> scale);
// upsample_nearest2d_plan: the forward as a gather.
GatherPlan upsample_nearest2d_plan(const Tensor& input, IntArrayRef output_size, std::optional<double> scales_h,
                                   std::optional<double> scales_w);
// nearest_source_ranges: for each input index, the output indices mapped to
// it, as [begin, end) pairs (nearest maps are non-decreasing, so they are runs).
std::vector<int64_t> nearest_source_ranges(int64_t in_size, int64_t out_size, std::optional<double> scale);

// GroupNormGeometry: native_group_norm's view of its input: [N, C, HxW] in
// `group` groups of C / group channels; stat_dtype is mean's and rstd's.
struct GroupNormGeometry {
  int64_t n = 0, c = 0, hxw = 0, group = 0;
  DType stat_dtype = DType::kFloat32;
};
// group_norm_geometry: PyTorch's check_group_norm_inputs and the kernel's
// checks (floating input, N * C * HxW elements, one device, parameter dtypes).
GroupNormGeometry group_norm_geometry(const Tensor& input, const std::optional<Tensor>& weight,
                                      const std::optional<Tensor>& bias, int64_t N, int64_t C, int64_t HxW,
                                      int64_t group, std::string_view op);
// check_group_norm_backward: dY and X of one dtype and N * C * HxW elements,
// mean and rstd of N * group, weight of C; returns the parameters' grad dtype.
DType check_group_norm_backward(const Tensor& grad_out, const Tensor& input, const Tensor& mean, const Tensor& rstd,
                                const std::optional<Tensor>& weight, int64_t N, int64_t C, int64_t HxW,
                                int64_t group);

// register_movement_kernels: this family's CPU and Meta kernels
// (kernels/cpu/movement.cc), called by register_builtin_kernels.
void register_movement_kernels(Dispatcher& d);

// Meta kernels.
Tensor constant_pad_nd_meta(const Tensor& self, IntArrayRef pad, const Scalar& value);
Tensor upsample_nearest2d_meta(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_h,
                               std::optional<double> scales_w);
Tensor upsample_nearest2d_backward_meta(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                        std::optional<double> scales_h, std::optional<double> scales_w);
std::tuple<Tensor, Tensor, Tensor> native_group_norm_meta(const Tensor& input, const std::optional<Tensor>& weight,
                                                          const std::optional<Tensor>& bias, int64_t N, int64_t C,
                                                          int64_t HxW, int64_t group, double eps);
std::tuple<Tensor, Tensor, Tensor> native_group_norm_backward_meta(const Tensor& grad_out, const Tensor& input,
                                                                   const Tensor& mean, const Tensor& rstd,
                                                                   const std::optional<Tensor>& weight, int64_t N,
                                                                   int64_t C, int64_t HxW, int64_t group,
                                                                   std::array<bool, 3> output_mask);
Tensor flip_meta(const Tensor& self, IntArrayRef dims);
// roll_strides: the layout PyTorch's CPU roll gives (checked args): each
// rolled dim is cat(narrow(x, d, start, n - start), narrow(x, d, 0, start), d),
// so cat's rule (the one channels-last format both pieces suggest, else
// row-major) decides per dim over the previous dim's result; an empty piece
// (a shift by a multiple of n) suggests row-major. No dims: flatten, roll,
// view (row-major); an empty self: clone(preserve_format). CUDA's roll is
// row-major, as PyTorch's.
SizeVec roll_strides(const Tensor& self, IntArrayRef shifts, IntArrayRef dims);
Tensor roll_meta(const Tensor& self, IntArrayRef shifts, IntArrayRef dims);
Tensor repeat_meta(const Tensor& self, IntArrayRef repeats);

}  // namespace opspec::internal
