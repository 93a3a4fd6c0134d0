// op_crossref_samples_test_util.h: the op crossref tests' per-op samples
// (See Note [Op crossref] in op_crossref_test.cc): for ops whose arguments
// must agree (a backward and its forward's saved tensors, a convolution's
// channels), a valid call with random geometry, as OpInfo's sample_inputs;
// and random_call, one seed's call of any op. Test-only.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "runtime/dispatch/dispatcher.h"
#include "runtime/ops/op_crossref_test_util.h"
#include "runtime/ops/ops.h"

namespace opspec::op_crossref_test {

// ---- Samples ----
// Some ops only run on arguments that agree with each other (a backward's
// gradient has its forward's output shape, a convolution's weight its
// input's channels); random arguments almost never do. A sample builds a
// valid call with random geometry, as OpInfo's sample_inputs functions do;
// half of such an op's seeds use it. Backward samples run their forward on
// the CPU for the saved tensors.

inline DType float_dtype(Rng& rng) {
  constexpr DType kFloats[] = {DType::kFloat32, DType::kFloat64, DType::kFloat32, DType::kBFloat16};
  return kFloats[pick(rng, 4)];
}
inline std::vector<int64_t> sizes_of(const Tensor& t) { return {t.sizes().begin(), t.sizes().end()}; }
inline Tensor index_tensor(Rng& rng, const std::vector<int64_t>& sizes, int64_t lo, int64_t hi) {
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
// conv_call: spatial dims and direction random unless given.
inline ConvCall conv_call(Rng& rng, std::optional<int> spatial_dims = std::nullopt,
                          std::optional<bool> transposed = std::nullopt) {
  ConvCall c;
  const int spatial = spatial_dims ? *spatial_dims : 1 + pick(rng, 2);
  const DType dt = float_dtype(rng);
  c.groups = 1 + pick(rng, 2);
  c.transposed = transposed ? *transposed : chance(rng, 30);
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
  if (chance(rng, 50)) c.bias = make_tensor(rng, {c.groups * out_per_group}, dt);
  return c;
}
inline Stack conv_stack(const ConvCall& c) {
  return {c.input,    c.weight,       c.bias.has_value() ? Value(*c.bias) : Value(std::nullopt),
          c.stride,   c.padding,      c.dilation,
          c.transposed, c.output_padding, c.groups};
}

inline Stack sample_convolution(Rng& rng) { return conv_stack(conv_call(rng)); }

inline Stack sample_convolution_backward(Rng& rng) {
  const ConvCall c = conv_call(rng);
  const Tensor out = ops::convolution(c.input, c.weight, c.bias, c.stride, c.padding, c.dilation, c.transposed,
                                      c.output_padding, c.groups);
  const Value bias_sizes = c.bias.has_value() ? Value(sizes_of(*c.bias)) : Value(std::nullopt);
  return {make_tensor(rng, sizes_of(out), out.dtype()), c.input, c.weight, bias_sizes, c.stride, c.padding,
          c.dilation, c.transposed, c.output_padding, c.groups,
          std::vector<bool>{chance(rng, 70), chance(rng, 70), chance(rng, 70)}};
}

inline Stack sample_max_pool2d_with_indices_backward(Rng& rng) {
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

inline Stack sample_diagonal_backward(Rng& rng) {
  std::vector<int64_t> input_sizes(2 + pick(rng, 2));
  for (int64_t& d : input_sizes) d = 1 + pick(rng, 4);
  const auto rank = static_cast<int>(input_sizes.size());
  const int64_t dim1 = pick(rng, rank), dim2 = (dim1 + 1 + pick(rng, rank - 1)) % rank;
  const int64_t offset = pick(rng, 7) - 3;
  const Tensor diag = ops::diagonal(ops::zeros(input_sizes, {.device = kMeta}), offset, dim1, dim2);
  return {make_tensor(rng, sizes_of(diag), float_dtype(rng)), input_sizes, offset, dim1 - (chance(rng, 30) ? rank : 0),
          dim2};
}

inline Stack sample_select_backward(Rng& rng) {
  std::vector<int64_t> input_sizes(1 + pick(rng, 3));
  for (int64_t& d : input_sizes) d = 1 + pick(rng, 4);
  const int64_t dim = pick(rng, static_cast<int>(input_sizes.size()));
  const int64_t index = pick(rng, static_cast<int>(2 * input_sizes[dim])) - input_sizes[dim];
  std::vector<int64_t> grad = input_sizes;
  grad.erase(grad.begin() + dim);
  return {make_tensor(rng, grad, float_dtype(rng)), input_sizes, dim, index};
}

inline Stack sample_index_put_(Rng& rng) {
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

inline Stack sample_upsample_nearest2d_backward(Rng& rng) {
  const std::vector<int64_t> input_size{1 + pick(rng, 2), 1 + pick(rng, 2), 1 + pick(rng, 4), 1 + pick(rng, 4)};
  const std::vector<int64_t> output_size{1 + pick(rng, 6), 1 + pick(rng, 6)};
  const Value scale_h = chance(rng, 50) ? Value(std::nullopt) : Value(0.5 * (1 + pick(rng, 4)));
  return {make_tensor(rng, {input_size[0], input_size[1], output_size[0], output_size[1]}, float_dtype(rng)),
          output_size, input_size, scale_h, std::nullopt};
}

inline Stack sample_native_group_norm(Rng& rng) {
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
inline Stack nll_call(Rng& rng, bool nd) {
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
inline Stack sample_nll_loss(Rng& rng) { return nll_call(rng, false); }
inline Stack sample_nll_loss_nd(Rng& rng) { return nll_call(rng, true); }
inline Stack sample_nll_loss_backward(Rng& rng) {
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
inline Stack nll2d_call(Rng& rng) {
  const int64_t classes = 1 + pick(rng, 4), n = pick(rng, 3), h = 1 + pick(rng, 3), w = 1 + pick(rng, 3);
  const DType dt = float_dtype(rng);
  const Value weight = chance(rng, 50) ? Value(make_tensor(rng, {classes}, dt)) : Value(std::nullopt);
  return {make_tensor(rng, {n, classes, h, w}, dt), index_tensor(rng, {n, h, w}, 0, classes), weight,
          int64_t{pick(rng, 3)}, chance(rng, 50) ? int64_t{-100} : int64_t{pick(rng, static_cast<int>(classes))}};
}
inline Stack sample_nll_loss2d_backward(Rng& rng) {
  Stack s = nll2d_call(rng);
  const std::optional<Tensor> weight = s[2].is_none() ? std::nullopt : std::optional<Tensor>(s[2].to_tensor());
  const auto [out, total_weight] = ops::nll_loss2d_forward(s[0].to_tensor(), s[1].to_tensor(), weight,
                                                           static_cast<ops::Reduction>(s[3].to_int()), s[4].to_int());
  s.insert(s.begin(), make_tensor(rng, sizes_of(out), out.dtype()));
  s.push_back(total_weight);
  return s;
}

inline Stack sample_native_dropout_backward(Rng& rng) {
  std::vector<int64_t> sizes = random_sizes(rng);
  return {make_tensor(rng, sizes, float_dtype(rng)), make_tensor(rng, sizes, DType::kBool), 1.0 + pick(rng, 3)};
}

inline Stack sample_flash_attention_backward(Rng& rng) {
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

// ---- Samples of the ops the random calls rarely get past their checks ----

// dims_of: `rank` sizes in [lo, lo + 3].
inline std::vector<int64_t> dims_of(Rng& rng, int rank, int64_t lo = 1) {
  std::vector<int64_t> s(static_cast<size_t>(rank));
  for (int64_t& d : s) d = lo + pick(rng, 4);
  return s;
}
inline Value maybe(Rng& rng, int percent, const Tensor& t) { return chance(rng, percent) ? Value(t) : Value(std::nullopt); }
inline std::optional<Tensor> opt(const Value& v) {
  return v.is_none() ? std::nullopt : std::optional<Tensor>(v.to_tensor());
}
inline std::array<bool, 3> mask3(Rng& rng) { return {chance(rng, 70), chance(rng, 70), chance(rng, 70)}; }
inline std::vector<bool> as_list(std::array<bool, 3> m) { return {m[0], m[1], m[2]}; }

inline Stack sample_native_layer_norm(Rng& rng) {
  const std::vector<int64_t> sizes = dims_of(rng, 1 + pick(rng, 3));
  const auto k = static_cast<size_t>(1 + pick(rng, static_cast<int>(sizes.size())));
  const std::vector<int64_t> normalized(sizes.end() - static_cast<std::ptrdiff_t>(k), sizes.end());
  const DType dt = float_dtype(rng);
  return {make_tensor(rng, sizes, dt), normalized, maybe(rng, 70, make_tensor(rng, normalized, dt)),
          maybe(rng, 70, make_tensor(rng, normalized, dt)), 1e-5};
}
inline Stack sample_native_layer_norm_backward(Rng& rng) {
  const Stack f = sample_native_layer_norm(rng);
  const Tensor& x = f[0].to_tensor();
  const auto [y, mean, rstd] = ops::native_layer_norm(x, f[1].to_int_list(), opt(f[2]), opt(f[3]), 1e-5);
  return {make_tensor(rng, sizes_of(y), x.dtype()), x, f[1], mean, rstd, f[2], f[3], as_list(mask3(rng))};
}

// attention_call: q (B, H, L, E), k and v (B, H, S, E), is_causal, a float mask or none, a scale or none.
struct AttentionCall {
  Tensor q, k, v;
  bool is_causal = false;
  std::optional<Tensor> mask;
  std::optional<double> scale;
};
inline AttentionCall attention_call(Rng& rng) {
  const int64_t b = 1 + pick(rng, 2), h = 1 + pick(rng, 2), l = 1 + pick(rng, 4), s = 1 + pick(rng, 4);
  const int64_t e = 1 + pick(rng, 4);
  const DType dt = chance(rng, 50) ? DType::kFloat32 : DType::kFloat64;
  AttentionCall a{make_tensor(rng, {b, h, l, e}, dt), make_tensor(rng, {b, h, s, e}, dt),
                  make_tensor(rng, {b, h, s, e}, dt)};
  a.is_causal = chance(rng, 30);
  if (chance(rng, 30) && !a.is_causal) a.mask = make_tensor(rng, {l, s}, dt);
  if (chance(rng, 50)) a.scale = 0.5;
  return a;
}
inline Value value_of(const std::optional<Tensor>& t) { return t ? Value(*t) : Value(std::nullopt); }
inline Value value_of(std::optional<double> d) { return d ? Value(*d) : Value(std::nullopt); }
inline Stack sample_flash_attention(Rng& rng) {
  const AttentionCall a = attention_call(rng);
  return {a.q, a.k, a.v, 0.0, a.is_causal, value_of(a.mask), value_of(a.scale)};
}
inline Stack sample_scaled_dot_product_attention(Rng& rng) {
  const AttentionCall a = attention_call(rng);
  return {a.q, a.k, a.v, value_of(a.mask), 0.0, a.is_causal, value_of(a.scale), false};
}
inline Stack sample_attention_math(Rng& rng) {
  const AttentionCall a = attention_call(rng);
  return {a.q, a.k, a.v, value_of(a.mask), 0.0, a.is_causal, std::nullopt, value_of(a.scale), false};
}

// pool_window: kernel, stride, padding (at most half the kernel) and an input [N?, C, H, W] they fit.
struct PoolWindow {
  int64_t k, stride, padding;
  Tensor self;
};
inline PoolWindow pool_window(Rng& rng) {
  PoolWindow w{1 + pick(rng, 3), 1 + pick(rng, 2), 0, Tensor()};
  w.padding = pick(rng, static_cast<int>(w.k / 2 + 1));
  std::vector<int64_t> sizes{1 + pick(rng, 2), w.k + pick(rng, 3), w.k + pick(rng, 3)};
  if (chance(rng, 50)) sizes.insert(sizes.begin(), 1 + pick(rng, 2));
  w.self = make_tensor(rng, sizes, float_dtype(rng));
  return w;
}
inline Stack sample_avg_pool2d_backward(Rng& rng) {
  const PoolWindow w = pool_window(rng);
  const bool ceil_mode = chance(rng, 30), count_include_pad = chance(rng, 50);
  const Value divisor = chance(rng, 70) ? Value(std::nullopt) : Value(int64_t{1 + pick(rng, 4)});
  const std::optional<int64_t> d = divisor.is_none() ? std::nullopt : std::optional<int64_t>(divisor.to_int());
  const Tensor out = ops::avg_pool2d(w.self, {w.k}, {w.stride}, {w.padding}, ceil_mode, count_include_pad, d);
  return {make_tensor(rng, sizes_of(out), out.dtype()), w.self, std::vector<int64_t>{w.k, w.k},
          std::vector<int64_t>{w.stride, w.stride}, std::vector<int64_t>{w.padding, w.padding}, ceil_mode,
          count_include_pad, divisor};
}
inline Stack sample_max_pool2d(Rng& rng) {
  const PoolWindow w = pool_window(rng);
  return {w.self, std::vector<int64_t>{w.k, w.k}, std::vector<int64_t>{w.stride, w.stride},
          std::vector<int64_t>{w.padding, w.padding}, std::vector<int64_t>{1, 1}, chance(rng, 30)};
}

// batch_norm_call: input [N, C, d...] with C-sized weight, bias and running
// statistics; training with more than one value per channel, or eval.
inline Stack batch_norm_call(Rng& rng) {
  std::vector<int64_t> sizes = dims_of(rng, 2 + pick(rng, 3));
  const int64_t c = sizes[1];
  const DType dt = float_dtype(rng);
  const bool training = chance(rng, 60);
  if (training) sizes[0] = std::max<int64_t>(sizes[0], 2);
  const Tensor var = ops::add(ops::abs(make_tensor(rng, {c}, dt)), 0.5);  // positive
  return {make_tensor(rng, sizes, dt), maybe(rng, 70, make_tensor(rng, {c}, dt)), maybe(rng, 70, make_tensor(rng, {c}, dt)),
          training && chance(rng, 30) ? Value(std::nullopt) : Value(make_tensor(rng, {c}, dt)),
          training && chance(rng, 30) ? Value(std::nullopt) : Value(var), training, 0.1, 1e-5};
}
inline Stack sample_native_batch_norm(Rng& rng) {
  Stack s = batch_norm_call(rng);
  if (s[3].is_none() != s[4].is_none()) s[4] = s[3].is_none() ? Value(std::nullopt) : s[4];
  if (!s[5].to_bool() && (s[3].is_none() || s[4].is_none())) s[5] = true;  // eval needs both statistics
  return s;
}
inline Stack sample_batch_norm(Rng& rng) {
  Stack s = sample_native_batch_norm(rng);
  s.push_back(false);  // cudnn_enabled
  return s;
}
inline Stack sample_native_batch_norm_backward(Rng& rng) {
  const Stack f = sample_native_batch_norm(rng);
  const Tensor& x = f[0].to_tensor();
  const bool training = f[5].to_bool();
  // The forward updates the running statistics in place: run it on copies.
  const std::optional<Tensor> rm = f[3].is_none() ? std::nullopt : std::optional<Tensor>(ops::clone(f[3].to_tensor()));
  const std::optional<Tensor> rv = f[4].is_none() ? std::nullopt : std::optional<Tensor>(ops::clone(f[4].to_tensor()));
  const auto [y, save_mean, save_invstd] = ops::native_batch_norm(x, opt(f[1]), opt(f[2]), rm, rv, training, 0.1, 1e-5);
  return {make_tensor(rng, sizes_of(y), x.dtype()), x, f[1], f[3], f[4], training ? Value(save_mean) : Value(std::nullopt),
          training ? Value(save_invstd) : Value(std::nullopt), training, 1e-5, as_list(mask3(rng))};
}

inline Stack sample_native_group_norm_backward(Rng& rng) {
  const Stack f = sample_native_group_norm(rng);
  const Tensor& x = f[0].to_tensor();
  const auto [y, mean, rstd] = ops::native_group_norm(x, opt(f[1]), opt(f[2]), f[3].to_int(), f[4].to_int(),
                                                       f[5].to_int(), f[6].to_int(), 1e-5);
  return {make_tensor(rng, sizes_of(y), x.dtype()), x, mean, rstd, f[1], f[3], f[4], f[5], f[6], as_list(mask3(rng))};
}
inline Stack sample_group_norm(Rng& rng) {
  const Stack f = sample_native_group_norm(rng);
  return {f[0], f[6], f[1], f[2], 1e-5, false};
}

// scatter_call: self, dim, an index no larger than self (or src) in its
// other dims with values in range, and a src at least the index's size.
struct ScatterCall {
  Tensor self, index, src;
  int64_t dim;
};
inline ScatterCall scatter_call(Rng& rng) {
  const std::vector<int64_t> sizes = dims_of(rng, 1 + pick(rng, 3));
  const auto rank = static_cast<int>(sizes.size());
  const int64_t dim = pick(rng, rank);
  std::vector<int64_t> index_sizes = sizes;
  for (int64_t& d : index_sizes) d = 1 + pick(rng, static_cast<int>(d));
  index_sizes[static_cast<size_t>(dim)] = 1 + pick(rng, 4);
  const DType dt = chance(rng, 70) ? float_dtype(rng) : kDTypes[pick(rng, 7)];
  ScatterCall c{make_tensor(rng, sizes, dt), index_tensor(rng, index_sizes, 0, sizes[static_cast<size_t>(dim)]),
                make_tensor(rng, index_sizes, dt), chance(rng, 20) ? dim - rank : dim};
  if (chance(rng, 25)) c.index = ops::to(c.index, DType::kInt32);  // PyTorch 2.x takes int32 indices too
  return c;
}
inline Stack sample_gather(Rng& rng) {
  const ScatterCall c = scatter_call(rng);
  return {c.self, c.dim, c.index, false};
}
inline Stack sample_scatter(Rng& rng) {
  const ScatterCall c = scatter_call(rng);
  return {c.self, c.dim, c.index, c.src};
}
inline Stack sample_scatter_reduce(Rng& rng) {
  const ScatterCall c = scatter_call(rng);
  const char* const reduces[] = {"sum", "prod", "mean", "amax", "amin"};
  return {c.self, c.dim, c.index, c.src, reduces[pick(rng, 5)], chance(rng, 50)};
}

// masked_call: self and a bool mask broadcasting to it.
inline std::pair<Tensor, Tensor> masked_call(Rng& rng) {
  const std::vector<int64_t> sizes = dims_of(rng, pick(rng, 4));
  std::vector<int64_t> mask_sizes(sizes.end() - pick(rng, static_cast<int>(sizes.size()) + 1), sizes.end());
  for (int64_t& d : mask_sizes) d = chance(rng, 25) ? 1 : d;
  return {make_tensor(rng, sizes, kDTypes[pick(rng, 7)]), make_tensor(rng, mask_sizes, DType::kBool)};
}
inline Stack sample_masked_fill(Rng& rng) {
  const auto [self, mask] = masked_call(rng);
  return {self, mask, Value(0.5 * pick(rng, 5))};
}
inline Stack sample_masked_fill_tensor(Rng& rng) {
  const auto [self, mask] = masked_call(rng);
  return {self, mask, make_tensor(rng, {}, chance(rng, 80) ? self.dtype() : DType::kFloat64)};
}
// fill_.Tensor: a 0-dim value, of self's dtype or another (item() converts it).
inline Stack sample_fill_tensor(Rng& rng) {
  const Tensor self = make_tensor(rng, random_sizes(rng), kDTypes[pick(rng, 7)]);
  return {self, make_tensor(rng, {}, chance(rng, 70) ? self.dtype() : kDTypes[pick(rng, 7)])};
}
// clamp_.Tensor, clamp_min_.Tensor, clamp_max_.Tensor and pow_.Tensor: an
// operand broadcasting to self's shape without growing it (a trailing part
// of self's sizes, some dims 1).
inline Tensor operand_into(Rng& rng, const Tensor& self) {
  const std::vector<int64_t> sizes(self.sizes().end() - pick(rng, static_cast<int>(self.dim()) + 1),
                                   self.sizes().end());
  std::vector<int64_t> b = sizes;
  for (int64_t& d : b) d = chance(rng, 30) ? 1 : d;
  return make_tensor(rng, b, chance(rng, 80) ? self.dtype() : kDTypes[pick(rng, 7)]);
}
inline Stack sample_clamp_inplace_tensor(Rng& rng) {
  const Tensor self = make_tensor(rng, random_sizes(rng), chance(rng, 70) ? DType::kFloat32 : kDTypes[pick(rng, 7)]);
  const Value lo = chance(rng, 25) ? Value() : Value(operand_into(rng, self));
  const Value hi = chance(rng, 25) ? Value() : Value(operand_into(rng, self));
  return {self, lo, hi};
}
inline Stack sample_binary_inplace_tensor(Rng& rng) {
  const Tensor self = make_tensor(rng, random_sizes(rng), chance(rng, 70) ? DType::kFloat32 : kDTypes[pick(rng, 7)]);
  return {self, operand_into(rng, self)};
}
// addcmul_ / addcdiv_ / lerp_: operands broadcasting to self's shape (lerp's
// of self's floating dtype most of the time, as its rule wants).
inline Stack sample_addc_inplace(Rng& rng) {
  const Tensor self = make_tensor(rng, random_sizes(rng), chance(rng, 70) ? DType::kFloat32 : kDTypes[pick(rng, 7)]);
  return {self, operand_into(rng, self), operand_into(rng, self), chance(rng, 50) ? 0.5 : -2.0};
}
inline Stack sample_lerp_inplace(Rng& rng, bool tensor_weight) {
  const Tensor self = make_tensor(rng, random_sizes(rng), float_dtype(rng));
  const auto same = [&] {
    Tensor t = operand_into(rng, self);
    return chance(rng, 85) ? ops::to(t, self.dtype()) : t;
  };
  const Tensor end = same();
  if (tensor_weight) return {self, end, same()};
  return {self, end, chance(rng, 50) ? 0.25 : 0.75};
}
inline Stack sample_masked_select(Rng& rng) {
  const auto [self, mask] = masked_call(rng);
  return {self, mask};
}
inline Stack sample_where(Rng& rng) {
  const auto [self, mask] = masked_call(rng);
  return {mask, self, make_tensor(rng, {}, chance(rng, 70) ? self.dtype() : kDTypes[pick(rng, 7)])};
}

inline Stack sample_select_scatter(Rng& rng) {
  const std::vector<int64_t> sizes = dims_of(rng, 1 + pick(rng, 3));
  const int64_t dim = pick(rng, static_cast<int>(sizes.size())), index = pick(rng, static_cast<int>(sizes[dim]));
  const DType dt = kDTypes[pick(rng, 7)];
  std::vector<int64_t> src = sizes;
  src.erase(src.begin() + dim);
  return {make_tensor(rng, sizes, dt), make_tensor(rng, src, dt), dim, index};
}
inline Stack sample_slice_backward(Rng& rng) {
  const std::vector<int64_t> sizes = dims_of(rng, 1 + pick(rng, 3));
  const int64_t dim = pick(rng, static_cast<int>(sizes.size())), n = sizes[static_cast<size_t>(dim)];
  const int64_t start = pick(rng, static_cast<int>(n)), end = start + pick(rng, static_cast<int>(n - start + 1));
  const int64_t step = 1 + pick(rng, 2);
  std::vector<int64_t> grad = sizes;
  grad[static_cast<size_t>(dim)] = (end - start + step - 1) / step;
  return {make_tensor(rng, grad, float_dtype(rng)), sizes, dim, start, end, step};
}
inline Stack sample_index(Rng& rng) {
  const Stack s = sample_index_put_(rng);
  return {s[0], s[1]};
}
inline Stack sample_index_put_impl(Rng& rng) {
  Stack s = sample_index_put_(rng);
  s.push_back(false);  // unsafe
  return s;
}

// Matrix products whose inner sizes agree.
inline Stack sample_mm(Rng& rng) {
  const int64_t n = pick(rng, 4), k = pick(rng, 4), m = pick(rng, 4);
  const DType dt = chance(rng, 80) ? float_dtype(rng) : kDTypes[pick(rng, 6)];
  return {make_tensor(rng, {n, k}, dt), make_tensor(rng, {k, m}, dt)};
}
inline Stack sample_bmm(Rng& rng) {
  const int64_t b = pick(rng, 3), n = pick(rng, 4), k = pick(rng, 4), m = pick(rng, 4);
  const DType dt = float_dtype(rng);
  return {make_tensor(rng, {b, n, k}, dt), make_tensor(rng, {b, k, m}, dt)};
}
inline Stack sample_addmm(Rng& rng) {
  const Stack mm = sample_mm(rng);
  const int64_t n = mm[0].to_tensor().size(0), m = mm[1].to_tensor().size(1);
  const std::vector<int64_t> bias = chance(rng, 50) ? std::vector<int64_t>{m} : std::vector<int64_t>{n, m};
  return {make_tensor(rng, bias, mm[0].to_tensor().dtype()), mm[0], mm[1], Value(0.5 * pick(rng, 3)),
          Value(0.5 * pick(rng, 3))};
}
inline Stack sample_mv(Rng& rng) {
  const int64_t n = pick(rng, 4), k = pick(rng, 4);
  const DType dt = float_dtype(rng);
  return {make_tensor(rng, {n, k}, dt), make_tensor(rng, {k}, dt)};
}
inline Stack sample_dot(Rng& rng) {
  const int64_t k = pick(rng, 5);
  const DType dt = float_dtype(rng);
  return {make_tensor(rng, {k}, dt), make_tensor(rng, {k}, dt)};
}

// The convolution composites: conv_call with their spatial dims and direction.
inline Stack sample_conv(Rng& rng, int spatial) {
  const ConvCall c = conv_call(rng, spatial, false);
  return {c.input, c.weight, value_of(c.bias), c.stride, c.padding, c.dilation, c.groups};
}
inline Stack sample_conv2d(Rng& rng) { return sample_conv(rng, 2); }
inline Stack sample_conv1d(Rng& rng) { return sample_conv(rng, 1); }
inline Stack sample_conv_transpose(Rng& rng, int spatial) {
  const ConvCall c = conv_call(rng, spatial, true);
  return {c.input, c.weight, value_of(c.bias), c.stride, c.padding, c.output_padding, c.groups, c.dilation};
}
inline Stack sample_conv_transpose2d(Rng& rng) { return sample_conv_transpose(rng, 2); }
inline Stack sample_conv_transpose1d(Rng& rng) { return sample_conv_transpose(rng, 1); }

inline Stack sample_cross_entropy(Rng& rng) {
  Stack s = nll_call(rng, true);
  if (chance(rng, 25)) s[1] = make_tensor(rng, sizes_of(s[0].to_tensor()), s[0].to_tensor().dtype());  // probabilities
  s.push_back(chance(rng, 50) ? 0.0 : 0.25);  // label_smoothing
  return s;
}
inline Stack sample_mse_loss(Rng& rng) {
  const std::vector<int64_t> sizes = dims_of(rng, pick(rng, 4), 0);
  const DType dt = float_dtype(rng);
  return {make_tensor(rng, sizes, dt), make_tensor(rng, sizes, dt), int64_t{pick(rng, 3)}};
}
inline Stack sample_mse_loss_backward(Rng& rng) {
  const Stack f = sample_mse_loss(rng);
  const Tensor out = ops::mse_loss(f[0].to_tensor(), f[1].to_tensor(), static_cast<ops::Reduction>(f[2].to_int()));
  return {make_tensor(rng, sizes_of(out), out.dtype()), f[0], f[1], f[2]};
}

inline Stack sample_bitwise(Rng& rng) {
  const std::vector<int64_t> sizes = dims_of(rng, pick(rng, 4));
  constexpr DType kInts[] = {DType::kInt64, DType::kInt32, DType::kBool};
  return {make_tensor(rng, sizes, kInts[pick(rng, 3)]), make_tensor(rng, sizes, kInts[pick(rng, 3)])};
}
inline Stack sample_unflatten(Rng& rng) {
  std::vector<int64_t> sizes = dims_of(rng, 1 + pick(rng, 3));
  const int64_t dim = pick(rng, static_cast<int>(sizes.size()));
  const int64_t a = 1 + pick(rng, 3), b = 1 + pick(rng, 3);
  sizes[static_cast<size_t>(dim)] = a * b;
  return {make_tensor(rng, sizes, kDTypes[pick(rng, 7)]), dim, std::vector<int64_t>{chance(rng, 30) ? -1 : a, b}};
}
inline Stack sample_narrow(Rng& rng) {
  const std::vector<int64_t> sizes = dims_of(rng, 1 + pick(rng, 3));
  const int64_t dim = pick(rng, static_cast<int>(sizes.size())), n = sizes[static_cast<size_t>(dim)];
  const int64_t start = pick(rng, static_cast<int>(n + 1));
  return {make_tensor(rng, sizes, kDTypes[pick(rng, 7)]), dim, chance(rng, 20) ? start - n : start,
          int64_t{pick(rng, static_cast<int>(n - start + 1))}};
}
inline Stack sample_split_with_sizes(Rng& rng) {
  const std::vector<int64_t> sizes = dims_of(rng, 1 + pick(rng, 3));
  const int64_t dim = pick(rng, static_cast<int>(sizes.size()));
  std::vector<int64_t> parts;
  for (int64_t left = sizes[static_cast<size_t>(dim)]; left > 0;) {
    parts.push_back(1 + pick(rng, static_cast<int>(left)));
    left -= parts.back();
  }
  return {make_tensor(rng, sizes, kDTypes[pick(rng, 7)]), parts, dim};
}

using SampleFn = Stack (*)(Rng&);
inline const std::map<std::string, SampleFn>& samples() {
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
      {"aten::nll_loss_forward", sample_nll_loss},
      {"aten::native_layer_norm", sample_native_layer_norm},
      {"aten::native_layer_norm_backward", sample_native_layer_norm_backward},
      {"aten::_scaled_dot_product_flash_attention_for_cpu", sample_flash_attention},
      {"aten::scaled_dot_product_attention", sample_scaled_dot_product_attention},
      {"aten::_scaled_dot_product_attention_math", sample_attention_math},
      {"aten::avg_pool2d_backward", sample_avg_pool2d_backward},
      {"aten::max_pool2d", sample_max_pool2d},
      {"aten::native_batch_norm", sample_native_batch_norm},
      {"aten::batch_norm", sample_batch_norm},
      {"aten::native_batch_norm_backward", sample_native_batch_norm_backward},
      {"aten::native_group_norm_backward", sample_native_group_norm_backward},
      {"aten::group_norm", sample_group_norm},
      {"aten::gather", sample_gather},
      {"aten::scatter.src", sample_scatter},
      {"aten::scatter_.src", sample_scatter},
      {"aten::scatter_add", sample_scatter},
      {"aten::scatter_add_", sample_scatter},
      {"aten::scatter_reduce.two", sample_scatter_reduce},
      {"aten::scatter_reduce_.two", sample_scatter_reduce},
      {"aten::masked_fill.Scalar", sample_masked_fill},
      {"aten::masked_fill_.Scalar", sample_masked_fill},
      {"aten::masked_fill.Tensor", sample_masked_fill_tensor},
      {"aten::masked_fill_.Tensor", sample_masked_fill_tensor},
      {"aten::masked_select", sample_masked_select},
      {"aten::fill_.Tensor", sample_fill_tensor},
      {"aten::clamp_.Tensor", sample_clamp_inplace_tensor},
      {"aten::pow_.Tensor", sample_binary_inplace_tensor},
      {"aten::clamp_min_.Tensor", sample_binary_inplace_tensor},
      {"aten::clamp_max_.Tensor", sample_binary_inplace_tensor},
      {"aten::where.self", sample_where},
      {"aten::addcmul_", sample_addc_inplace},
      {"aten::addcdiv_", sample_addc_inplace},
      {"aten::lerp_.Scalar", +[](Rng& rng) { return sample_lerp_inplace(rng, false); }},
      {"aten::lerp_.Tensor", +[](Rng& rng) { return sample_lerp_inplace(rng, true); }},
      {"aten::select_scatter", sample_select_scatter},
      {"aten::slice_backward", sample_slice_backward},
      {"aten::index.Tensor", sample_index},
      {"aten::index_put", sample_index_put_},
      {"aten::_index_put_impl_", sample_index_put_impl},
      {"aten::mm", sample_mm},
      {"aten::bmm", sample_bmm},
      {"aten::addmm", sample_addmm},
      {"aten::mv", sample_mv},
      {"aten::dot", sample_dot},
      {"aten::conv2d", sample_conv2d},
      {"aten::conv1d", sample_conv1d},
      {"aten::conv_transpose2d.input", sample_conv_transpose2d},
      {"aten::conv_transpose1d", sample_conv_transpose1d},
      {"aten::cross_entropy_loss", sample_cross_entropy},
      {"aten::mse_loss", sample_mse_loss},
      {"aten::mse_loss_backward", sample_mse_loss_backward},
      {"aten::bitwise_or.Tensor", sample_bitwise},
      {"aten::unflatten.int", sample_unflatten},
      {"aten::narrow", sample_narrow},
      {"aten::split_with_sizes", sample_split_with_sizes},
      {"aten::_scaled_dot_product_flash_attention_for_cpu_backward", sample_flash_attention_backward},
  };
  return kSamples;
}

// random_call: seed's call of op: its sample on odd seeds when it has one,
// else a random value (or the default, half the time) for every argument.
inline Stack random_call(const OperatorHandle& op, int seed) {
  const std::string name = op.schema().qualified_name();
  Rng rng(std::hash<std::string>{}(name) ^ (static_cast<uint64_t>(seed) * 0x9e3779b97f4a7c15ull));
  const CallShape call{random_sizes(rng), chance(rng, 60) ? DType::kFloat32 : kDTypes[pick(rng, 7)]};
  if (const auto sample = samples().find(name); sample != samples().end() && seed % 2 == 1) return sample->second(rng);
  Stack args;
  for (const Argument& a : op.schema().arguments()) {
    args.push_back(a.default_value.has_value() && chance(rng, 50) ? *a.default_value : random_value(rng, call, a));
  }
  return args;
}

}  // namespace opspec::op_crossref_test
