// layers.cc: Linear, ReLU, LayerNorm, Embedding, Conv2d, ConvTranspose2d, BatchNorm2d, GroupNorm, the pools
// and Sequential.
#include "runtime/nn/layers.h"

#include <cmath>
#include <string>
#include <string_view>

#include "runtime/core/error.h"
#include "runtime/dispatch/mode.h"

namespace opspec::nn {
namespace {

// uniform: values in [-bound, bound) as rand * 2 * bound - bound, PyTorch's
// uniform_(-bound, bound) built from ops.
Tensor uniform(IntArrayRef size, double bound, const TensorOptions& options) {
  return ops::sub(ops::mul(ops::rand(size, options), 2.0 * bound), bound);
}

// conv_init_bound: _ConvNd's checks and initial bound for `name`: in and out
// channels divisible by groups; 1/sqrt(fan_in) (kaiming_uniform_ with a =
// sqrt(5)), fan_in = the weight's dim 1 (weight_dim1) x k x k.
double conv_init_bound(std::string_view name, int64_t in_channels, int64_t out_channels, int64_t groups,
                       int64_t weight_dim1, int64_t kernel_size) {
  OPSPEC_CHECK(groups > 0 && in_channels % groups == 0 && out_channels % groups == 0, "nn.", name,
               ": in_channels and out_channels must be divisible by groups, got ", in_channels, ", ", out_channels,
               " and ", groups);
  const int64_t fan_in = weight_dim1 * kernel_size * kernel_size;
  return fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
}

}  // namespace

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim, std::optional<int64_t> padding_idx,
                     TensorOptions options)
    : Module("Embedding") {
  OPSPEC_CHECK(num_embeddings >= 0 && embedding_dim >= 0, "nn.Embedding: num_embeddings and embedding_dim must be ",
               "non-negative, got ", num_embeddings, " and ", embedding_dim);
  if (padding_idx) {
    // F.embedding's check (an AssertionError in PyTorch).
    OPSPEC_CHECK(*padding_idx < num_embeddings && *padding_idx >= -num_embeddings,
                 "nn.Embedding: Padding_idx must be within num_embeddings");
    padding_idx_ = *padding_idx < 0 ? *padding_idx + num_embeddings : *padding_idx;
  }
  // See Note [Module initialisation is not recorded].
  HideUserModesGuard no_user_modes;
  Tensor w = ops::randn({num_embeddings, embedding_dim}, options);
  if (padding_idx_ >= 0) {
    Tensor row = ops::select(w, 0, padding_idx_);
    ops::fill_(row, 0);
  }
  weight_ = &register_parameter("weight", w);
}

Tensor Embedding::forward(const Tensor& indices) { return ops::embedding(*weight_, indices, padding_idx_); }

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride, int64_t padding,
               int64_t dilation, int64_t groups, bool bias, TensorOptions options)
    : Module("Conv2d"), stride_(stride), padding_(padding), dilation_(dilation), groups_(groups) {
  const double bound = conv_init_bound("Conv2d", in_channels, out_channels, groups, in_channels / groups, kernel_size);
  HideUserModesGuard no_user_modes;
  weight_ = &register_parameter("weight", uniform({out_channels, in_channels / groups, kernel_size, kernel_size},
                                                  bound, options));
  if (bias) bias_ = &register_parameter("bias", uniform({out_channels}, bound, options));
}

Tensor Conv2d::forward(const Tensor& input) {
  const std::optional<Tensor> bias = bias_ != nullptr ? std::optional<Tensor>(*bias_) : std::nullopt;
  return ops::conv2d(input, *weight_, bias, {stride_}, {padding_}, {dilation_}, groups_);
}

ConvTranspose2d::ConvTranspose2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride,
                                 int64_t padding, int64_t output_padding, int64_t groups, bool bias, int64_t dilation,
                                 TensorOptions options)
    : Module("ConvTranspose2d"),
      stride_(stride),
      padding_(padding),
      output_padding_(output_padding),
      groups_(groups),
      dilation_(dilation) {
  const double bound =
      conv_init_bound("ConvTranspose2d", in_channels, out_channels, groups, out_channels / groups, kernel_size);
  HideUserModesGuard no_user_modes;
  weight_ = &register_parameter("weight", uniform({in_channels, out_channels / groups, kernel_size, kernel_size},
                                                  bound, options));
  if (bias) bias_ = &register_parameter("bias", uniform({out_channels}, bound, options));
}

Tensor ConvTranspose2d::forward(const Tensor& input) {
  const std::optional<Tensor> bias = bias_ != nullptr ? std::optional<Tensor>(*bias_) : std::nullopt;
  return ops::conv_transpose2d(input, *weight_, bias, {stride_}, {padding_}, {output_padding_}, groups_,
                               {dilation_});
}

BatchNorm2d::BatchNorm2d(int64_t num_features, double eps, double momentum, TensorOptions options)
    : Module("BatchNorm2d"), eps_(eps), momentum_(momentum) {
  HideUserModesGuard no_user_modes;
  weight_ = &register_parameter("weight", ops::ones({num_features}, options));
  bias_ = &register_parameter("bias", ops::zeros({num_features}, options));
  running_mean_ = &register_buffer("running_mean", ops::zeros({num_features}, options));
  running_var_ = &register_buffer("running_var", ops::ones({num_features}, options));
  num_batches_tracked_ = &register_buffer(
      "num_batches_tracked", ops::zeros({}, {.dtype = DType::kInt64, .device = options.device}));
}

Tensor BatchNorm2d::forward(const Tensor& input) {
  OPSPEC_CHECK(input.dim() == 4, "nn.BatchNorm2d: expected 4D input (got ", input.dim(), "D input)");
  if (is_training()) {
    // self.num_batches_tracked.add_(1): a Python number, a wrapped scalar.
    ops::add_(*num_batches_tracked_, internal::make_wrapped_number(1));
    // F.batch_norm's _verify_batch_size.
    OPSPEC_CHECK(input.numel() / input.size(1) != 1, "nn.BatchNorm2d: Expected more than 1 value per channel when "
                 "training, got input size ", format_sizes(input.sizes()));
  }
  return ops::batch_norm(input, *weight_, *bias_, *running_mean_, *running_var_, is_training(), momentum_, eps_);
}

GroupNorm::GroupNorm(int64_t num_groups, int64_t num_channels, double eps, bool affine, TensorOptions options)
    : Module("GroupNorm"), num_groups_(num_groups), eps_(eps) {
  // PyTorch's ValueError.
  OPSPEC_CHECK(num_groups > 0 && num_channels % num_groups == 0,
               "nn.GroupNorm: num_channels must be divisible by num_groups");
  if (!affine) return;
  HideUserModesGuard no_user_modes;
  weight_ = &register_parameter("weight", ops::ones({num_channels}, options));
  bias_ = &register_parameter("bias", ops::zeros({num_channels}, options));
}

Tensor GroupNorm::forward(const Tensor& input) {
  OPSPEC_CHECK(input.dim() >= 2, "nn.GroupNorm: Expected at least 2 dimensions for input tensor but received ",
               input.dim());
  // F.group_norm's _verify_batch_size over [N * C / G, G, *].
  SizeVec sizes = {input.size(0) * input.size(1) / num_groups_, num_groups_};
  for (int64_t d = 2; d < input.dim(); ++d) sizes.push_back(input.size(d));
  OPSPEC_CHECK(compute_numel(sizes) / sizes[1] != 1, "nn.GroupNorm: Expected more than 1 value per channel when "
               "training, got input size ", format_sizes(sizes));
  const std::optional<Tensor> w = weight_ ? std::optional<Tensor>(*weight_) : std::nullopt;
  const std::optional<Tensor> b = bias_ ? std::optional<Tensor>(*bias_) : std::nullopt;
  return ops::group_norm(input, num_groups_, w, b, eps_);
}

Tensor MaxPool2d::forward(const Tensor& input) {
  return ops::max_pool2d(input, {kernel_}, {stride_}, {padding_});
}

Tensor AdaptiveAvgPool2d::forward(const Tensor& input) { return ops::adaptive_avg_pool2d(input, {size_}); }

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, TensorOptions options)
    : Module("Linear"), in_features_(in_features), out_features_(out_features) {
  OPSPEC_CHECK(in_features >= 0 && out_features >= 0, "nn.Linear: in_features and out_features must be ",
               "non-negative, got ", in_features, " and ", out_features);
  // See Note [Module initialisation is not recorded].
  HideUserModesGuard no_user_modes;
  // kaiming_uniform_(a=sqrt(5)) gives gain sqrt(1/3), so bound
  // gain * sqrt(3 / fan_in) = 1 / sqrt(fan_in); the bias uses the same bound
  // (0 when fan_in is 0, where PyTorch skips the weight's init: it has no elements).
  const double bound = in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
  weight_ = &register_parameter("weight", uniform({out_features, in_features}, bound, options));
  if (bias) bias_ = &register_parameter("bias", uniform({out_features}, bound, options));
}

Tensor Linear::forward(const Tensor& input) { return ops::linear(input, *weight_, bias()); }

Tensor ReLU::forward(const Tensor& input) { return ops::relu(input); }

LayerNorm::LayerNorm(std::vector<int64_t> normalized_shape, double eps, bool elementwise_affine, bool bias,
                     TensorOptions options)
    : Module("LayerNorm"), normalized_shape_(std::move(normalized_shape)), eps_(eps) {
  for (int64_t s : normalized_shape_) {
    OPSPEC_CHECK(s >= 0, "nn.LayerNorm: normalized_shape must be non-negative, got ",
                 format_sizes(normalized_shape_));
  }
  if (!elementwise_affine) return;
  // See Note [Module initialisation is not recorded].
  HideUserModesGuard no_user_modes;
  weight_ = &register_parameter("weight", ops::ones(normalized_shape_, options));
  if (bias) bias_ = &register_parameter("bias", ops::zeros(normalized_shape_, options));
}

Tensor LayerNorm::forward(const Tensor& input) {
  return ops::layer_norm(input, normalized_shape_, weight(), bias(), eps_);
}

RMSNorm::RMSNorm(std::vector<int64_t> normalized_shape, std::optional<double> eps, bool elementwise_affine,
                 TensorOptions options)
    : Module("RMSNorm"), normalized_shape_(std::move(normalized_shape)), eps_(eps) {
  for (int64_t s : normalized_shape_) {
    OPSPEC_CHECK(s >= 0, "nn.RMSNorm: normalized_shape must be non-negative, got ", format_sizes(normalized_shape_));
  }
  if (!elementwise_affine) return;
  // See Note [Module initialisation is not recorded].
  HideUserModesGuard no_user_modes;
  weight_ = &register_parameter("weight", ops::ones(normalized_shape_, options));
}

Tensor RMSNorm::forward(const Tensor& input) { return ops::rms_norm(input, normalized_shape_, weight(), eps_); }

Sequential::Sequential(std::vector<std::shared_ptr<Module>> modules) : Module("Sequential") {
  for (auto& m : modules) push_back(std::move(m));
}

void Sequential::push_back(std::shared_ptr<Module> m) {
  register_module(std::to_string(modules_.size()), m);
  modules_.push_back(std::move(m));
}

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (const auto& m : modules_) x = (*m)(x);
  return x;
}

const std::shared_ptr<Module>& Sequential::operator[](size_t i) const {
  OPSPEC_CHECK(i < modules_.size(), "nn.Sequential: index ", i, " is out of range (size ", modules_.size(), ")");
  return modules_[i];
}

}  // namespace opspec::nn
