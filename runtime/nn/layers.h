// layers.h: the built-in layers (PyTorch's nn.Linear, nn.ReLU, nn.LayerNorm,
// nn.Sequential). Forwards call the public ops, so modes see their aten ops.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/nn/module.h"
#include "runtime/ops/ops.h"

namespace opspec::nn {

// Note [Module initialisation is not recorded]
// Parameters are created from ops (rand, mul, sub, ones, zeros) under a
// HideUserModesGuard, so building a model while a recording mode is active
// (DebugMode, a logging mode) records only the model's forward, as in
// PyTorch where nn.init runs under no_grad and before the mode is entered in
// the usual scripts. Infra modes still see initialisation: under
// FakeTensorMode the parameters are fake tensors and no data is allocated.

// Linear: y = x @ weight^T + bias; weight [out, in], bias [out]. Initialised
// as PyTorch (kaiming_uniform_ with a = sqrt(5)): both uniform in
// [-1/sqrt(in), 1/sqrt(in)), from the default generator.
// See Note [Module initialisation is not recorded].
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true, TensorOptions options = {});
  // forward: ops::linear(input, weight, bias).
  Tensor forward(const Tensor& input) override;

  // in_features / out_features: the sizes given at construction.
  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }
  // weight / bias: the registered parameters (bias is nullopt without one).
  const Tensor& weight() const { return *weight_; }
  std::optional<Tensor> bias() const { return bias_ ? std::optional<Tensor>(*bias_) : std::nullopt; }

 private:
  int64_t in_features_;
  int64_t out_features_;
  Tensor* weight_;
  Tensor* bias_ = nullptr;
};

// ReLU: ops::relu; no parameters.
class ReLU : public Module {
 public:
  ReLU() : Module("ReLU") {}
  // forward: ops::relu(input).
  Tensor forward(const Tensor& input) override;
};

// LayerNorm: ops::layer_norm over the trailing normalized_shape dims; weight
// ones and bias zeros of that shape when elementwise_affine (bias = false
// drops the bias, as PyTorch 2.1's flag). See Note [Module initialisation is not recorded].
class LayerNorm : public Module {
 public:
  explicit LayerNorm(std::vector<int64_t> normalized_shape, double eps = 1e-5, bool elementwise_affine = true,
                     bool bias = true, TensorOptions options = {});
  // forward: ops::layer_norm(input, normalized_shape, weight, bias, eps).
  Tensor forward(const Tensor& input) override;

  // normalized_shape / eps: as given at construction.
  const std::vector<int64_t>& normalized_shape() const { return normalized_shape_; }
  double eps() const { return eps_; }
  // weight / bias: the registered parameters, or nullopt.
  std::optional<Tensor> weight() const { return weight_ ? std::optional<Tensor>(*weight_) : std::nullopt; }
  std::optional<Tensor> bias() const { return bias_ ? std::optional<Tensor>(*bias_) : std::nullopt; }

 private:
  std::vector<int64_t> normalized_shape_;
  double eps_;
  Tensor* weight_ = nullptr;
  Tensor* bias_ = nullptr;
};

// RMSNorm: ops::rms_norm over the trailing normalized_shape dims, weight ones
// of that shape when elementwise_affine; eps nullopt is the input dtype's
// epsilon (PyTorch 2.4's nn.RMSNorm). See Note [Module initialisation is not recorded].
class RMSNorm : public Module {
 public:
  explicit RMSNorm(std::vector<int64_t> normalized_shape, std::optional<double> eps = std::nullopt,
                   bool elementwise_affine = true, TensorOptions options = {});
  // forward: ops::rms_norm(input, normalized_shape, weight, eps).
  Tensor forward(const Tensor& input) override;

  const std::vector<int64_t>& normalized_shape() const { return normalized_shape_; }
  std::optional<double> eps() const { return eps_; }
  std::optional<Tensor> weight() const { return weight_ ? std::optional<Tensor>(*weight_) : std::nullopt; }

 private:
  std::vector<int64_t> normalized_shape_;
  std::optional<double> eps_;
  Tensor* weight_ = nullptr;
};

// Embedding: rows of weight [num_embeddings, embedding_dim] at integer
// indices (ops::embedding); weight ~ N(0, 1), with the padding_idx row (if
// any) zeroed, as PyTorch. A negative padding_idx counts from the end.
// See Note [Module initialisation is not recorded].
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim, std::optional<int64_t> padding_idx = std::nullopt,
            TensorOptions options = {});
  // forward: ops::embedding(weight, indices, padding_idx).
  Tensor forward(const Tensor& indices) override;

  // weight: the registered parameter.
  const Tensor& weight() const { return *weight_; }
  // padding_idx: the normalised padding row, or -1 for none.
  int64_t padding_idx() const { return padding_idx_; }

 private:
  Tensor* weight_;
  int64_t padding_idx_ = -1;
};

// Conv2d: ops::conv2d with weight [out, in / groups, k, k] and bias [out],
// initialised as PyTorch (kaiming_uniform_ with a = sqrt(5)): both uniform in
// [-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = in / groups * k * k.
// See Note [Module initialisation is not recorded].
class Conv2d : public Module {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride = 1, int64_t padding = 0,
         int64_t dilation = 1, int64_t groups = 1, bool bias = true, TensorOptions options = {});
  // forward: ops::conv2d(input, weight, bias, stride, padding, dilation, groups).
  Tensor forward(const Tensor& input) override;
  const Tensor& weight() const { return *weight_; }

 private:
  int64_t stride_, padding_, dilation_, groups_;
  Tensor* weight_;
  Tensor* bias_ = nullptr;
};

// ConvTranspose2d: ops::conv_transpose2d with weight [in, out / groups, k, k]
// and bias [out], initialised as PyTorch: uniform in [-1/sqrt(fan_in),
// 1/sqrt(fan_in)) with fan_in = out / groups * k * k (the weight's dim 1,
// as _calculate_fan_in_and_fan_out reads it). See Note [Module initialisation is not recorded].
class ConvTranspose2d : public Module {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride = 1,
                  int64_t padding = 0, int64_t output_padding = 0, int64_t groups = 1, bool bias = true,
                  int64_t dilation = 1, TensorOptions options = {});
  // forward: ops::conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation).
  Tensor forward(const Tensor& input) override;
  const Tensor& weight() const { return *weight_; }

 private:
  int64_t stride_, padding_, output_padding_, groups_, dilation_;
  Tensor* weight_;
  Tensor* bias_ = nullptr;
};

// BatchNorm2d: ops::batch_norm over [N, C, H, W]; weight ones, bias zeros,
// buffers running_mean zeros, running_var ones and num_batches_tracked (i64,
// incremented by add_ before each training call, as PyTorch's module does).
// Training (the default) normalises by the batch and updates the running
// statistics; eval() normalises by them. See Note [Module initialisation is not recorded].
class BatchNorm2d : public Module {
 public:
  explicit BatchNorm2d(int64_t num_features, double eps = 1e-5, double momentum = 0.1, TensorOptions options = {});
  // forward: add_(num_batches_tracked, 1) when training, then ops::batch_norm.
  Tensor forward(const Tensor& input) override;
  const Tensor& running_mean() const { return *running_mean_; }
  const Tensor& running_var() const { return *running_var_; }

 private:
  double eps_, momentum_;
  Tensor* weight_;
  Tensor* bias_;
  Tensor* running_mean_;
  Tensor* running_var_;
  Tensor* num_batches_tracked_;
};

// GroupNorm: ops::group_norm over [N, C, *] in num_groups groups; with
// affine, weight ones and bias zeros of num_channels (None without), as
// PyTorch's module. See Note [Module initialisation is not recorded].
class GroupNorm : public Module {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true,
            TensorOptions options = {});
  // forward: F.group_norm's checks (2+ dims, more than one value per group), then ops::group_norm.
  Tensor forward(const Tensor& input) override;

 private:
  int64_t num_groups_;
  double eps_;
  Tensor* weight_ = nullptr;
  Tensor* bias_ = nullptr;
};

// MaxPool2d: ops::max_pool2d (stride defaults to kernel_size, as PyTorch's module).
class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(int64_t kernel_size, std::optional<int64_t> stride = std::nullopt, int64_t padding = 0)
      : Module("MaxPool2d"), kernel_(kernel_size), stride_(stride.value_or(kernel_size)), padding_(padding) {}
  Tensor forward(const Tensor& input) override;

 private:
  int64_t kernel_, stride_, padding_;
};

// AdaptiveAvgPool2d: ops::adaptive_avg_pool2d to [size, size].
class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(int64_t output_size) : Module("AdaptiveAvgPool2d"), size_(output_size) {}
  Tensor forward(const Tensor& input) override;

 private:
  int64_t size_;
};

// Sequential: calls its modules in order, each on the previous one's output
// (an empty Sequential returns its input). Children are named "0", "1", ...
class Sequential : public Module {
 public:
  Sequential() : Module("Sequential") {}
  explicit Sequential(std::vector<std::shared_ptr<Module>> modules);
  // push_back: appends m as child "<size()>".
  void push_back(std::shared_ptr<Module> m);
  // forward: input through every module in order.
  Tensor forward(const Tensor& input) override;

  // size: the number of modules (a module added twice counts twice).
  size_t size() const { return modules_.size(); }
  // operator[]: the i-th module (throws opspec::Error when out of range).
  const std::shared_ptr<Module>& operator[](size_t i) const;

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

}  // namespace opspec::nn
