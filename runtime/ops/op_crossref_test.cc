// Every aten op called with random arguments built from its schema, as
// PyTorch's OpInfo crossref tests call ops with sampled inputs: on the CPU
// and again on Meta tensors of the same sizes, strides and dtypes. See Note
// [Op crossref].
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace op_crossref_test {

// Note [Op crossref]
// Hostile input must end in an opspec::Error, never a crash, a foreign
// exception or undefined behaviour (ci/sanitize runs this under ASan and
// UBSan), and fake tensors must see what the CPU sees. For each op, each
// seed builds one call: tensors of small random shapes (often one shape for
// all, so binary ops get past their checks), dtypes, values and layouts
// (transposed and strided views), ints, floats and lists from small ranges
// with a few extreme values (huge sizes, NaN, inf), and defaults half the
// time. The call then runs on the CPU and on Meta copies of its tensors:
//   - either may throw opspec::Error; anything else thrown fails the test;
//   - when the CPU succeeds, Meta must succeed with outputs of the same
//     sizes, dtypes and strides (PyTorch's meta functions check what the CPU
//     checks and lay results out as it does, except values: ops tagged
//     kDynamicOutputShape have no Meta answer).
// OPSPEC_CROSSREF_SEEDS raises the calls per op for a longer hunt;
// OPSPEC_CROSSREF_TRACE=1 prints each call before it runs (to name a crash)
// and the CPU's error when it refuses one.

using Rng = std::mt19937_64;

int pick(Rng& rng, int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); }
bool chance(Rng& rng, int percent) { return pick(rng, 100) < percent; }

constexpr DType kDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                             DType::kInt64,   DType::kInt32,   DType::kBool};

// CallShape: the shape most tensors of one call share.
struct CallShape {
  std::vector<int64_t> sizes;
  DType dtype;
};

std::vector<int64_t> random_sizes(Rng& rng) {
  std::vector<int64_t> s(pick(rng, 5));
  for (int64_t& d : s) d = chance(rng, 8) ? 0 : 1 + pick(rng, 4);
  return s;
}

// make_tensor: values from a small range (indices often land in range),
// sometimes a transposed or strided view of a larger tensor.
Tensor make_tensor(Rng& rng, const std::vector<int64_t>& sizes, DType dt) {
  const int layout = pick(rng, 5);  // 0: transposed, 1: strided, else dense
  std::vector<int64_t> base = sizes;
  if (layout == 0 && sizes.size() >= 2) std::swap(base.front(), base.back());
  if (layout == 1 && !sizes.empty()) base.front() *= 2;
  int64_t n = 1;
  for (int64_t d : base) n *= d;
  std::vector<double> values(n);
  for (double& v : values) {
    if (dt == DType::kBool) {
      v = pick(rng, 2);
    } else if (is_floating(dt)) {
      v = chance(rng, 2) ? std::numeric_limits<double>::quiet_NaN() : (pick(rng, 17) - 8) * 0.375;
    } else {
      v = pick(rng, 7) - 2;
    }
  }
  Tensor t = ops::tensor(std::move(values), base, dt);
  if (layout == 0 && sizes.size() >= 2) t = ops::transpose(t, 0, static_cast<int64_t>(sizes.size()) - 1);
  if (layout == 1 && !sizes.empty()) t = ops::slice(t, 0, 0, std::nullopt, 2);
  return t;
}

// random_tensor: a tensor of the call's shape and dtype most of the time.
Tensor random_tensor(Rng& rng, const CallShape& call) {
  const bool same = chance(rng, 70);
  const std::vector<int64_t> sizes = same ? call.sizes : random_sizes(rng);
  return make_tensor(rng, sizes, same || chance(rng, 50) ? call.dtype : kDTypes[pick(rng, 7)]);
}

int64_t random_int(Rng& rng) {
  if (chance(rng, 3)) return chance(rng, 50) ? std::numeric_limits<int64_t>::max() : int64_t{1} << 40;
  return pick(rng, 9) - 3;
}
double random_float(Rng& rng) {
  if (chance(rng, 3)) {
    const double special[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity(), 1e300};
    return special[pick(rng, 4)];
  }
  return (pick(rng, 13) - 4) * 0.25;
}
// random_int_list: windows' geometry (kernel_size, stride, padding, ...)
// mostly in range, other lists often the call's shape (sizes, views).
std::vector<int64_t> random_int_list(Rng& rng, const CallShape& call, const Argument& arg) {
  const bool window = arg.name == "kernel_size" || arg.name == "stride" || arg.name == "dilation" ||
                      arg.name == "padding" || arg.name == "output_size" || arg.name == "output_padding";
  std::vector<int64_t> l(arg.type.list_size > 0 ? arg.type.list_size : window ? 2 : pick(rng, 4));
  if (window && chance(rng, 80)) {
    for (int64_t& v : l) v = pick(rng, 2) + (arg.name == "padding" || arg.name == "output_padding" ? 0 : 1);
    return l;
  }
  if (arg.type.list_size == 0 && chance(rng, 40)) return call.sizes;
  for (int64_t& v : l) v = random_int(rng);
  return l;
}

// random_index: an i64 index tensor (index, indices, target) mostly in range.
Tensor random_index(Rng& rng, const CallShape& call) {
  std::vector<int64_t> sizes = chance(rng, 50) ? call.sizes : std::vector<int64_t>{1 + pick(rng, 4)};
  int64_t n = 1;
  for (int64_t d : sizes) n *= d;
  std::vector<double> values(n);
  for (double& v : values) v = chance(rng, 5) ? pick(rng, 9) - 4 : pick(rng, 2);
  return ops::tensor(std::move(values), sizes, DType::kInt64);
}

const char* const kStrings[] = {"none", "tanh", "sum", "mean", "amax", "amin", "prod", "trunc", "floor", "bad"};

// random_value: one argument of the given type (a list, an optional, a base type).
Value random_value(Rng& rng, const CallShape& call, const Argument& arg) {
  const ArgType& type = arg.type;
  if (type.is_optional && chance(rng, 25)) return std::nullopt;
  if (type.is_list) {
    switch (type.kind) {
      case TypeKind::kInt: return random_int_list(rng, call, arg);
      case TypeKind::kFloat: {
        std::vector<double> l(type.list_size > 0 ? type.list_size : pick(rng, 4));
        for (double& v : l) v = random_float(rng);
        return l;
      }
      case TypeKind::kBool: {
        std::vector<bool> l(type.list_size > 0 ? type.list_size : pick(rng, 4));
        for (size_t i = 0; i < l.size(); ++i) l[i] = chance(rng, 50);
        return l;
      }
      default: {  // Tensor[], Tensor?[]
        std::vector<Tensor> l(1 + pick(rng, 3));
        for (Tensor& t : l) t = random_tensor(rng, call);
        return l;
      }
    }
  }
  switch (type.kind) {
    case TypeKind::kTensor:
      if ((arg.name == "index" || arg.name == "indices" || arg.name == "target") && chance(rng, 80)) {
        return random_index(rng, call);
      }
      return random_tensor(rng, call);
    case TypeKind::kScalar: {
      const int k = pick(rng, 3);
      return k == 0 ? Value(random_int(rng)) : k == 1 ? Value(random_float(rng)) : Value(chance(rng, 50));
    }
    case TypeKind::kInt: return random_int(rng);
    case TypeKind::kFloat: return random_float(rng);
    case TypeKind::kBool: return chance(rng, 50);
    case TypeKind::kString: return kStrings[pick(rng, 10)];
    case TypeKind::kScalarType: return kDTypes[pick(rng, 7)];
    case TypeKind::kDevice: return chance(rng, 90) ? Device(kCPU) : Device(DeviceType::kCUDA, 0);
    default: return std::nullopt;  // layout, memory format, generator: their defaults
  }
}

// to_meta: a Meta tensor with t's sizes, strides, offset, storage size and
// dtype (no data), so views of it reach what views of t reach.
Value to_meta(const Value& v) {
  if (v.is_tensor()) {
    const Tensor& t = v.to_tensor();
    if (!t.defined()) return v;
    const auto storage = static_cast<int64_t>(t.impl()->storage()->nbytes()) / t.element_size();
    const Tensor base = ops::empty({storage}, {.dtype = t.dtype(), .device = kMeta});
    return ops::as_strided(base, t.sizes(), t.strides(), t.storage_offset());
  }
  if (v.is_tensor_list()) {
    std::vector<Tensor> l;
    for (const Tensor& t : v.to_tensor_list()) l.push_back(to_meta(Value(t)).to_tensor());
    return l;
  }
  if (v.is_device() && v.to_device().is_cpu()) return kMeta;  // to(cpu) of a meta tensor stays meta
  return v;
}


// ---- Samples ----
// Some ops only run on arguments that agree with each other (a backward's
// gradient has its forward's output shape, a convolution's weight its
// input's channels); random arguments almost never do. A sample builds a
// valid call with random geometry, as OpInfo's sample_inputs functions do;
// half of such an op's seeds use it. Backward samples run their forward on
// the CPU for the saved tensors.

DType float_dtype(Rng& rng) {
  constexpr DType kFloats[] = {DType::kFloat32, DType::kFloat64, DType::kFloat32, DType::kBFloat16};
  return kFloats[pick(rng, 4)];
}
std::vector<int64_t> sizes_of(const Tensor& t) { return {t.sizes().begin(), t.sizes().end()}; }
Tensor index_tensor(Rng& rng, const std::vector<int64_t>& sizes, int64_t lo, int64_t hi) {
  int64_t n = 1;
  for (int64_t d : sizes) n *= d;
  std::vector<double> v(n);
  for (double& x : v) x = static_cast<double>(lo + pick(rng, static_cast<int>(hi - lo)));
  return ops::tensor(std::move(v), sizes, DType::kInt64);
}

// ConvCall: a convolution's arguments with consistent channels and geometry.
struct ConvCall {
  Tensor input, weight;
  std::optional<Tensor> bias;
  std::vector<int64_t> stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
};
ConvCall conv_call(Rng& rng) {
  ConvCall c;
  const int spatial = 1 + pick(rng, 2);
  const DType dt = float_dtype(rng);
  c.groups = 1 + pick(rng, 2);
  c.transposed = chance(rng, 30);
  const int64_t in_per_group = 1 + pick(rng, 2), out_per_group = 1 + pick(rng, 2);
  std::vector<int64_t> input{1 + pick(rng, 2), c.groups * in_per_group};
  std::vector<int64_t> weight = c.transposed ? std::vector<int64_t>{c.groups * in_per_group, out_per_group}
                                             : std::vector<int64_t>{c.groups * out_per_group, in_per_group};
  for (int d = 0; d < spatial; ++d) {
    const int64_t k = 1 + pick(rng, 3), stride = 1 + pick(rng, 2), dilation = 1 + pick(rng, 2);
    const int64_t padding = pick(rng, 2);
    weight.push_back(k);
    c.stride.push_back(stride);
    c.dilation.push_back(dilation);
    c.padding.push_back(padding);
    // A transposed convolution's output_padding must be below stride or dilation.
    const int64_t out_pad = c.transposed ? pick(rng, static_cast<int>(std::max(stride, dilation))) : 0;
    c.output_padding.push_back(out_pad);
    const int64_t window = dilation * (k - 1) + 1;
    input.push_back(c.transposed ? 1 + pick(rng, 3) : std::max<int64_t>(1, window - 2 * padding) + pick(rng, 3));
    // A transposed output (in - 1) stride - 2 padding + window + output_padding must stay >= 1.
    if (c.transposed) c.padding.back() = std::min(padding, ((input.back() - 1) * stride + window - 1 + out_pad) / 2);
  }
  c.input = make_tensor(rng, input, dt);
  c.weight = make_tensor(rng, weight, dt);
  if (chance(rng, 50)) c.bias = make_tensor(rng, {c.groups * (c.transposed ? out_per_group : out_per_group)}, dt);
  return c;
}
Stack conv_stack(const ConvCall& c) {
  return {c.input,    c.weight,       c.bias.has_value() ? Value(*c.bias) : Value(std::nullopt),
          c.stride,   c.padding,      c.dilation,
          c.transposed, c.output_padding, c.groups};
}

Stack sample_convolution(Rng& rng) { return conv_stack(conv_call(rng)); }

Stack sample_convolution_backward(Rng& rng) {
  const ConvCall c = conv_call(rng);
  const Tensor out = ops::convolution(c.input, c.weight, c.bias, c.stride, c.padding, c.dilation, c.transposed,
                                      c.output_padding, c.groups);
  const Value bias_sizes = c.bias.has_value() ? Value(sizes_of(*c.bias)) : Value(std::nullopt);
  return {make_tensor(rng, sizes_of(out), out.dtype()), c.input, c.weight, bias_sizes, c.stride, c.padding,
          c.dilation, c.transposed, c.output_padding, c.groups,
          std::vector<bool>{chance(rng, 70), chance(rng, 70), chance(rng, 70)}};
}

Stack sample_max_pool2d_with_indices_backward(Rng& rng) {
  const int64_t k = 1 + pick(rng, 3), stride = 1 + pick(rng, 2), dilation = 1 + pick(rng, 2);
  const int64_t padding = pick(rng, static_cast<int>(k / 2 + 1));
  const bool ceil_mode = chance(rng, 30);
  std::vector<int64_t> sizes{1 + pick(rng, 2), dilation * (k - 1) + 1 + pick(rng, 3), 1 + pick(rng, 4)};
  sizes.back() += dilation * (k - 1);
  if (chance(rng, 50)) sizes.insert(sizes.begin(), 1 + pick(rng, 2));
  const Tensor self = make_tensor(rng, sizes, float_dtype(rng));
  const auto [out, indices] = ops::max_pool2d_with_indices(self, {k, k}, {stride, stride}, {padding, padding},
                                                           {dilation, dilation}, ceil_mode);
  return {make_tensor(rng, sizes_of(out), out.dtype()), self, std::vector<int64_t>{k, k},
          std::vector<int64_t>{stride, stride}, std::vector<int64_t>{padding, padding},
          std::vector<int64_t>{dilation, dilation}, ceil_mode, indices};
}

Stack sample_diagonal_backward(Rng& rng) {
  std::vector<int64_t> input_sizes(2 + pick(rng, 2));
  for (int64_t& d : input_sizes) d = 1 + pick(rng, 4);
  const auto rank = static_cast<int>(input_sizes.size());
  const int64_t dim1 = pick(rng, rank), dim2 = (dim1 + 1 + pick(rng, rank - 1)) % rank;
  const int64_t offset = pick(rng, 7) - 3;
  const Tensor diag = ops::diagonal(ops::zeros(input_sizes, {.device = kMeta}), offset, dim1, dim2);
  return {make_tensor(rng, sizes_of(diag), float_dtype(rng)), input_sizes, offset, dim1 - (chance(rng, 30) ? rank : 0),
          dim2};
}

Stack sample_select_backward(Rng& rng) {
  std::vector<int64_t> input_sizes(1 + pick(rng, 3));
  for (int64_t& d : input_sizes) d = 1 + pick(rng, 4);
  const int64_t dim = pick(rng, static_cast<int>(input_sizes.size()));
  const int64_t index = pick(rng, static_cast<int>(2 * input_sizes[dim])) - input_sizes[dim];
  std::vector<int64_t> grad = input_sizes;
  grad.erase(grad.begin() + dim);
  return {make_tensor(rng, grad, float_dtype(rng)), input_sizes, dim, index};
}

Stack sample_index_put_(Rng& rng) {
  std::vector<int64_t> sizes(1 + pick(rng, 3));
  for (int64_t& d : sizes) d = 1 + pick(rng, 4);
  const Tensor self = make_tensor(rng, sizes, kDTypes[pick(rng, 7)]);
  std::vector<Tensor> indices(1 + pick(rng, static_cast<int>(sizes.size())));
  const std::vector<int64_t> index_sizes{1 + pick(rng, 3)};
  bool any = false;
  for (size_t d = 0; d < indices.size(); ++d) {
    if (chance(rng, 25) && d + 1 < indices.size()) continue;  // None: the whole dim
    // A bool mask alone: its count would rarely broadcast with other indices.
    indices[d] = indices.size() == 1 && chance(rng, 30) ? ops::gt(make_tensor(rng, {sizes[d]}, DType::kFloat32), 0.0)
                                 : index_tensor(rng, index_sizes, -sizes[d], sizes[d]);
    any = true;
  }
  std::vector<std::optional<Tensor>> optional_indices(indices.begin(), indices.end());
  for (size_t d = 0; d < indices.size(); ++d) {
    if (!indices[d].defined()) optional_indices[d] = std::nullopt;
  }
  const Tensor selected = any ? ops::index(self, optional_indices) : self;
  std::vector<int64_t> values = sizes_of(selected);
  if (chance(rng, 30) && !values.empty()) values.front() = 1;  // broadcast
  return {self, indices, make_tensor(rng, values, self.dtype()), chance(rng, 50)};
}

Stack sample_upsample_nearest2d_backward(Rng& rng) {
  const std::vector<int64_t> input_size{1 + pick(rng, 2), 1 + pick(rng, 2), 1 + pick(rng, 4), 1 + pick(rng, 4)};
  const std::vector<int64_t> output_size{1 + pick(rng, 6), 1 + pick(rng, 6)};
  const Value scale_h = chance(rng, 50) ? Value(std::nullopt) : Value(0.5 * (1 + pick(rng, 4)));
  return {make_tensor(rng, {input_size[0], input_size[1], output_size[0], output_size[1]}, float_dtype(rng)),
          output_size, input_size, scale_h, std::nullopt};
}

Stack sample_native_group_norm(Rng& rng) {
  const int64_t n = 1 + pick(rng, 2), group = 1 + pick(rng, 2), channels = group * (1 + pick(rng, 2));
  std::vector<int64_t> sizes{n, channels};
  int64_t hxw = 1;
  for (int d = pick(rng, 3); d > 0; --d) hxw *= sizes.emplace_back(1 + pick(rng, 3));
  const DType dt = float_dtype(rng);
  const Value weight = chance(rng, 70) ? Value(make_tensor(rng, {channels}, dt)) : Value(std::nullopt);
  const Value bias = chance(rng, 70) ? Value(make_tensor(rng, {channels}, dt)) : Value(std::nullopt);
  return {make_tensor(rng, sizes, dt), weight, bias, n, channels, hxw, group, 1e-5};
}

// NllCall: nll_loss's arguments: log-probabilities [N, C, d...] or [C], targets in range or ignored.
Stack nll_call(Rng& rng, bool nd) {
  const int64_t classes = 1 + pick(rng, 4);
  std::vector<int64_t> sizes{1 + pick(rng, 3), classes};
  if (chance(rng, 20) && !nd) sizes = {classes};
  if (nd && chance(rng, 60)) sizes.push_back(1 + pick(rng, 3));
  std::vector<int64_t> target = sizes;
  target.erase(target.begin() + (sizes.size() == 1 ? 0 : 1));
  const DType dt = float_dtype(rng);
  const int64_t ignore_index = chance(rng, 50) ? -100 : pick(rng, static_cast<int>(classes));
  const Value weight = chance(rng, 50) ? Value(make_tensor(rng, {classes}, dt)) : Value(std::nullopt);
  return {make_tensor(rng, sizes, dt), index_tensor(rng, target, 0, classes), weight, int64_t{pick(rng, 3)},
          ignore_index};
}
Stack sample_nll_loss(Rng& rng) { return nll_call(rng, false); }
Stack sample_nll_loss_nd(Rng& rng) { return nll_call(rng, true); }
Stack sample_nll_loss_backward(Rng& rng) {
  Stack s = nll_call(rng, false);
  const std::optional<Tensor> weight = s[2].is_none() ? std::nullopt : std::optional<Tensor>(s[2].to_tensor());
  const auto reduction = static_cast<ops::Reduction>(s[3].to_int());
  const auto [out, total_weight] =
      ops::nll_loss_forward(s[0].to_tensor(), s[1].to_tensor(), weight, reduction, s[4].to_int());
  s.insert(s.begin(), make_tensor(rng, sizes_of(out), out.dtype()));
  s.push_back(total_weight);
  return s;
}

// nll2d_call: nll_loss2d's arguments: [N, C, H, W] log-probabilities, [N, H, W] targets.
Stack nll2d_call(Rng& rng) {
  const int64_t classes = 1 + pick(rng, 4), n = pick(rng, 3), h = 1 + pick(rng, 3), w = 1 + pick(rng, 3);
  const DType dt = float_dtype(rng);
  const Value weight = chance(rng, 50) ? Value(make_tensor(rng, {classes}, dt)) : Value(std::nullopt);
  return {make_tensor(rng, {n, classes, h, w}, dt), index_tensor(rng, {n, h, w}, 0, classes), weight,
          int64_t{pick(rng, 3)}, chance(rng, 50) ? int64_t{-100} : int64_t{pick(rng, static_cast<int>(classes))}};
}
Stack sample_nll_loss2d_backward(Rng& rng) {
  Stack s = nll2d_call(rng);
  const std::optional<Tensor> weight = s[2].is_none() ? std::nullopt : std::optional<Tensor>(s[2].to_tensor());
  const auto [out, total_weight] = ops::nll_loss2d_forward(s[0].to_tensor(), s[1].to_tensor(), weight,
                                                           static_cast<ops::Reduction>(s[3].to_int()), s[4].to_int());
  s.insert(s.begin(), make_tensor(rng, sizes_of(out), out.dtype()));
  s.push_back(total_weight);
  return s;
}

Stack sample_native_dropout_backward(Rng& rng) {
  std::vector<int64_t> sizes = random_sizes(rng);
  return {make_tensor(rng, sizes, float_dtype(rng)), make_tensor(rng, sizes, DType::kBool), 1.0 + pick(rng, 3)};
}

Stack sample_flash_attention_backward(Rng& rng) {
  const int64_t b = 1 + pick(rng, 2), h = 1 + pick(rng, 2), l = 1 + pick(rng, 4), s = 1 + pick(rng, 4);
  const int64_t e = 1 + pick(rng, 4), ev = e;  // the flash kernel wants one head size
  const DType dt = chance(rng, 50) ? DType::kFloat32 : DType::kFloat64;
  const Tensor q = make_tensor(rng, {b, h, l, e}, dt), k = make_tensor(rng, {b, h, s, e}, dt);
  const Tensor v = make_tensor(rng, {b, h, s, ev}, dt);
  const bool is_causal = chance(rng, 30);
  const std::optional<Tensor> mask =
      chance(rng, 30) && !is_causal ? std::optional<Tensor>(make_tensor(rng, {l, s}, dt)) : std::nullopt;
  const std::optional<double> scale = chance(rng, 50) ? std::nullopt : std::optional<double>(0.5);
  const auto [out, logsumexp] = ops::_scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, is_causal, mask, scale);
  return {make_tensor(rng, sizes_of(out), dt), q, k, v, out, logsumexp, 0.0, is_causal,
          mask.has_value() ? Value(*mask) : Value(std::nullopt), scale.has_value() ? Value(*scale) : Value(std::nullopt)};
}

using SampleFn = Stack (*)(Rng&);
const std::map<std::string, SampleFn>& samples() {
  static const std::map<std::string, SampleFn> kSamples = {
      {"aten::convolution", sample_convolution},
      {"aten::convolution_backward", sample_convolution_backward},
      {"aten::max_pool2d_with_indices_backward", sample_max_pool2d_with_indices_backward},
      {"aten::diagonal_backward", sample_diagonal_backward},
      {"aten::select_backward", sample_select_backward},
      {"aten::index_put_", sample_index_put_},
      {"aten::upsample_nearest2d_backward", sample_upsample_nearest2d_backward},
      {"aten::native_group_norm", sample_native_group_norm},
      {"aten::nll_loss", sample_nll_loss},
      {"aten::nll_loss_nd", sample_nll_loss_nd},
      {"aten::nll_loss_backward", sample_nll_loss_backward},
      {"aten::nll_loss2d_forward", nll2d_call},
      {"aten::nll_loss2d", nll2d_call},
      {"aten::nll_loss2d_backward", sample_nll_loss2d_backward},
      {"aten::native_dropout_backward", sample_native_dropout_backward},
      {"aten::_scaled_dot_product_flash_attention_for_cpu_backward", sample_flash_attention_backward},
  };
  return kSamples;
}


// Outcome: how one call ended.
struct Outcome {
  enum Kind { kOk, kError, kForeign } kind = kOk;
  std::string message;
  Stack results;
};

Outcome run(const OperatorHandle& op, Stack stack) {
  Outcome o;
  try {
    op.call_boxed(stack);
    o.results = std::move(stack);
  } catch (const Error& e) {
    o.kind = Outcome::kError;
    o.message = e.what();
  } catch (const std::exception& e) {
    o.kind = Outcome::kForeign;
    o.message = std::string("std::exception: ") + e.what();
  } catch (...) {
    o.kind = Outcome::kForeign;
    o.message = "an exception of unknown type";
  }
  return o;
}

// kMetaRefusals: calls the CPU runs and Meta refuses in PyTorch too.
struct MetaRefusal {
  std::string_view op, message, why;
};
constexpr MetaRefusal kMetaRefusals[] = {
    {"aten::_local_scalar_dense", "cannot be called on meta tensors", "item() needs the data"},
    {"", "data-dependent output shape", "a bool mask's nonzero needs the data"},
    {"aten::scaled_dot_product_attention", "Explicit attn_mask should not be set when is_causal=True",
     "the kernel is chosen by device: the CPU's flash kernel takes a mask with is_causal, Meta's math path "
     "(_fused_sdp_choice_meta) refuses it"},
    {"aten::_scaled_dot_product_attention_math", "expected self and mat2 to have the same dtype",
     "Meta is subclass-like (c10's kTensorSubclassLike has the meta bit): the mask is added out of place and "
     "promotes, where the CPU's add_ keeps the scores' dtype"},
};

bool meta_cannot_answer(const OperatorHandle& op, const Outcome& meta) {
  for (const MetaRefusal& r : kMetaRefusals) {
    if ((r.op.empty() || r.op == op.schema().qualified_name()) && meta.message.find(r.message) != std::string::npos) {
      return true;
    }
  }
  return false;
}

std::string describe(const Value& v) {
  if (v.is_tensor()) {
    const Tensor& t = v.to_tensor();
    if (!t.defined()) return "undefined";
    return std::string(dtype_short_name(t.dtype())) + format_sizes(t.sizes());
  }
  if (v.is_tensor_list()) {
    std::string s = "[";
    for (const Tensor& t : v.to_tensor_list()) s += describe(Value(t)) + ", ";
    return s + "]";
  }
  return v.repr();
}
std::string describe_call(const OperatorHandle& op, const Stack& args) {
  std::string s = op.schema().qualified_name() + "(";
  for (const Value& v : args) s += describe(v) + ", ";
  return s + ")";
}

// significant_strides: t's strides where they matter, as PyTorch's
// check_significant_strides compares them: dims of size 1 and empty tensors
// have any stride, so "*" stands there. The storage offset too (views).
std::string significant_strides(const Tensor& t) {
  if (!t.defined() || t.numel() == 0) return "";
  std::string s = "strides (";
  for (int64_t d = 0; d < t.dim(); ++d) s += (t.sizes()[d] > 1 ? std::to_string(t.strides()[d]) : "*") + ",";
  return s + ") offset " + std::to_string(t.storage_offset());
}
std::vector<Tensor> tensors_of(const Value& v) {
  if (v.is_tensor()) return {v.to_tensor()};
  if (v.is_tensor_list()) return v.to_tensor_list();
  return {};
}

// meta_mismatch: "" when every tensor result of meta has cpu's sizes, dtype
// and significant strides, else the first difference.
std::string meta_mismatch(const Stack& cpu, const Stack& meta) {
  if (cpu.size() != meta.size()) return "a different number of results";
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (!cpu[i].is_tensor() && !cpu[i].is_tensor_list()) continue;
    if (describe(cpu[i]) != describe(meta[i])) {
      return "result " + std::to_string(i) + ": cpu " + describe(cpu[i]) + ", meta " + describe(meta[i]);
    }
    const std::vector<Tensor> c = tensors_of(cpu[i]), m = tensors_of(meta[i]);
    for (size_t j = 0; j < c.size(); ++j) {
      if (significant_strides(c[j]) != significant_strides(m[j])) {
        return "result " + std::to_string(i) + ": cpu " + describe(Value(c[j])) + " " + significant_strides(c[j]) +
               ", meta " + significant_strides(m[j]);
      }
    }
  }
  return "";
}

int seeds_per_op() {
  const char* env = std::getenv("OPSPEC_CROSSREF_SEEDS");
  return env != nullptr ? std::max(1, std::atoi(env)) : 64;
}

TEST(OpCrossrefTest, RandomCallsFailCleanlyAndMetaAgreesWithTheCpu) {
  const int seeds = seeds_per_op();
  const bool trace = std::getenv("OPSPEC_CROSSREF_TRACE") != nullptr;
  std::map<std::string, int> ok_calls;
  std::vector<std::string> problems;
  for (const OperatorHandle* op : Dispatcher::singleton().ops()) {
    if (op->schema().ns() != "aten" || (!op->has_kernel(DispatchKey::kCPU) && !op->is_composite())) continue;
    const std::string name = op->schema().qualified_name();
    for (int seed = 0; seed < seeds; ++seed) {
      Rng rng(std::hash<std::string>{}(name) ^ (static_cast<uint64_t>(seed) * 0x9e3779b97f4a7c15ull));
      const CallShape call{random_sizes(rng), chance(rng, 60) ? DType::kFloat32 : kDTypes[pick(rng, 7)]};
      Stack args;
      if (const auto sample = samples().find(name); sample != samples().end() && seed % 2 == 1) {
        args = sample->second(rng);
      } else {
        for (const Argument& a : op->schema().arguments()) {
          args.push_back(a.default_value.has_value() && chance(rng, 50) ? *a.default_value
                                                                        : random_value(rng, call, a));
        }
      }
      Stack meta_args;
      for (const Value& v : args) meta_args.push_back(to_meta(v));
      const std::string what = describe_call(*op, args);
      if (trace) std::fprintf(stderr, "%s\n", what.c_str());
      const Outcome cpu = run(*op, args);
      if (trace && cpu.kind == Outcome::kError) std::fprintf(stderr, "  cpu: %s\n", cpu.message.c_str());
      if (cpu.kind == Outcome::kForeign) problems.push_back(what + " on cpu threw " + cpu.message);
      const Outcome meta = run(*op, meta_args);
      if (meta.kind == Outcome::kForeign) problems.push_back(what + " on meta threw " + meta.message);
      if (cpu.kind != Outcome::kOk) continue;
      ++ok_calls[name];
      if (op->has_tag(OpTag::kDynamicOutputShape)) continue;
      if (meta.kind != Outcome::kOk && meta_cannot_answer(*op, meta)) continue;
      if (meta.kind != Outcome::kOk) {
        problems.push_back(what + ": the cpu ran it, meta threw: " + meta.message);
      } else if (const std::string m = meta_mismatch(cpu.results, meta.results); !m.empty()) {
        problems.push_back(what + ": " + m);
      }
    }
  }
  for (const std::string& p : problems) ADD_FAILURE() << p;
  if (trace) {
    for (const OperatorHandle* op : Dispatcher::singleton().ops()) {
      const std::string& n = op->schema().qualified_name();
      if (op->schema().ns() == "aten" && !ok_calls.contains(n)) std::fprintf(stderr, "never ran: %s\n", n.c_str());
    }
  }
  // The generator reaches most ops' kernels, not only their argument checks,
  // and a sample's calls mostly run (a sample that bit-rotted into errors would
  // hide its op again).
  EXPECT_GT(ok_calls.size(), 250u);
  for (const auto& [name, sample] : samples()) {
    if (Dispatcher::singleton().find(name) == nullptr) continue;
    EXPECT_GE(ok_calls[name], seeds / 4) << name << ": its sample's calls fail";
  }
}

}  // namespace op_crossref_test
}  // namespace opspec
