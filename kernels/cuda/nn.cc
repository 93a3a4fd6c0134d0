// nn.cc: CUDA kernels of the model ops: _safe_softmax, index_select, embedding,
// embedding_dense_backward, tril, triu, argmax and argmin
// (kernels/cpu/indexing.cc), nll_loss_forward and nll_loss_backward
// (kernels/cpu/loss.cc), and _scaled_dot_product_flash_attention_for_cpu and
// its backward (kernels/cpu/attention.cc): the CPU kernels' checks
// (kernels/common/nn_meta.h), dtypes, layouts and error texts, then the
// launchers of nn.cu.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/common/factory_meta.h"  // device_kernel_name
#include "kernels/common/nn_meta.h"
#include "kernels/common/reduce_meta.h"  // softmax_dim
#include "kernels/cuda/cuda_copy.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/nn_launch.h"
#include "runtime/core/memory_format.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/elementwise_rules.h"

namespace opspec::internal::cuda {
namespace {

// ---- Index checks ----

// Note [Index checks on CUDA]
// The CPU kernels reject an index out of range with a message naming the
// first bad one ("index out of range in self (index 7, size 5)", "Target 7
// is out of bounds."). On CUDA a kernel sets a device flag when any index is
// bad and the host reads the flag back: a 4-byte copy, which waits for the
// work queued before it (See Note [CUDA streams] in cuda_device.h). Only
// when the flag is set are the indices copied to the host, to find the first
// bad one and throw the CPU's message. So a bad index is an opspec::Error on
// every device, never a device-side assert, at the price of one
// synchronization per call of these ops.

// host_indices: the values of index (on a cuda device) as int64 on the host.
std::vector<int64_t> host_indices(const Tensor& index) {
  const Tensor host = make_tensor(index.sizes(), DType::kInt64, kCPU);
  copy_between(host, index);
  const auto* p = static_cast<const int64_t*>(host.raw_data());
  return std::vector<int64_t>(p, p + host.numel());
}

void check_index(int64_t i, int64_t n, std::string_view op) {
  OPSPEC_CHECK(i >= 0 && i < n, op, ": index out of range in self (index ", i, ", size ", n, ")");
}

void check_target(int64_t t, int64_t n_classes, std::string_view op) {
  OPSPEC_CHECK(t >= 0 && t < n_classes, op, ": Target ", t, " is out of bounds.");
}

// any_bad_index: whether one of the first `count` values of idx (contiguous,
// on dev) lies outside [0, n), values equal to `ignore` aside.
bool any_bad_index(const Tensor& idx, int64_t count, int64_t n, std::optional<int64_t> ignore, Device dev) {
  if (count == 0) return false;
  DeviceGuard guard(dev);
  const Tensor flag = empty_cuda({}, DType::kInt32, dev);
  check(cudaMemsetAsync(flag.raw_data(), 0, sizeof(int32_t), nullptr), "index check");
  launch_check_indices(code_of(idx.dtype()), idx.raw_data(), count, n, ignore.has_value(), ignore.value_or(0),
                       static_cast<int*>(flag.raw_data()));
  int32_t bad = 0;
  check(cudaMemcpy(&bad, flag.raw_data(), sizeof(bad), cudaMemcpyDeviceToHost), "index check");
  return bad != 0;
}

// check_indices: kernels/cpu/indexing.cc's read_indices check of idx (on dev) against [0, n).
void check_indices(const Tensor& idx, int64_t n, std::string_view op, Device dev) {
  if (!any_bad_index(idx, idx.numel(), n, std::nullopt, dev)) return;
  for (const int64_t i : host_indices(idx)) check_index(i, n, op);
}

// check_targets: kernels/cpu/loss.cc's check of the first `batch` targets (on dev) but ignore_index
// (batch: the items, nll_loss2d's N x H x W).
void check_targets(const Tensor& target, int64_t batch, int64_t n_classes, int64_t ignore_index, std::string_view op,
                   Device dev) {
  if (!any_bad_index(target, batch, n_classes, ignore_index, dev)) return;
  const std::vector<int64_t> t = host_indices(target);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t c = t[static_cast<size_t>(b)];
    if (c != ignore_index) check_target(c, n_classes, op);
  }
}

// ---- Indexing, embeddings, triangles, argmax/argmin ----

// gather_rows: out[o, j, :] = self[o, idx[j], :] over self as [outer, n, inner].
void gather_rows(const Tensor& self, const Tensor& idx, int64_t outer, int64_t n, int64_t inner, const Tensor& out,
                 Device dev) {
  const Tensor src = on_device(self, self.dtype(), dev);
  DeviceGuard guard(dev);
  launch_gather_rows(static_cast<int>(self.element_size()), code_of(idx.dtype()), src.raw_data(), idx.raw_data(),
                     out.raw_data(), outer, n, idx.numel(), inner);
}

Tensor index_select_cuda(const Tensor& self, int64_t dim, const Tensor& index) {
  constexpr std::string_view kOp = "aten::index_select";
  int64_t d = 0;
  const SizeVec sizes = index_select_shape(self, dim, index, &d);
  const Device dev = op_device({self, index}, kOp);
  Tensor out = empty_cuda(sizes, self.dtype(), dev);
  const int64_t n = self.dim() == 0 ? 1 : self.size(d);
  const Tensor idx = on_device(index, index.dtype(), dev);
  check_indices(idx, n, kOp, dev);
  if (out.numel() == 0) return out;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= self.size(i);
  for (int64_t i = d + 1; i < self.dim(); ++i) inner *= self.size(i);
  gather_rows(self, idx, outer, n, inner, out, dev);
  return out;
}

Tensor embedding_cuda(const Tensor& weight, const Tensor& indices, int64_t, bool, bool) {
  constexpr std::string_view kOp = "aten::embedding";
  const SizeVec sizes = embedding_shape(weight, indices);
  const Device dev = op_device({weight, indices}, kOp);
  Tensor out = empty_cuda(sizes, weight.dtype(), dev);
  const Tensor idx = on_device(indices, indices.dtype(), dev);
  check_indices(idx, weight.size(0), kOp, dev);
  if (out.numel() == 0) return out;
  gather_rows(weight, idx, 1, weight.size(0), weight.size(1), out, dev);
  return out;
}

// embedding_dense_backward: as kernels/cpu/indexing.cc, every row of the
// result sums its grad rows in index order, so results are the CPU's bits.
// The rows feeding each result row are listed on the host (the indices come
// over anyway for the check, See Note [Index checks on CUDA]) and go to the
// device as offsets and row numbers.
Tensor embedding_dense_backward_cuda(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                                     int64_t padding_idx, bool scale_grad_by_freq) {
  constexpr std::string_view kOp = "aten::embedding_dense_backward";
  const Tensor meta = embedding_dense_backward_meta(grad_output, indices, num_weights, padding_idx,
                                                    scale_grad_by_freq);
  const int64_t width = meta.size(1);
  const Device dev = op_device({grad_output, indices}, kOp);
  Tensor out = empty_cuda(meta.sizes(), grad_output.dtype(), dev);
  const std::vector<int64_t> idx = host_indices(on_device(indices, indices.dtype(), dev));
  for (const int64_t i : idx) check_index(i, num_weights, kOp);
  // The CPU kernel's message (its dtype dispatch).
  OPSPEC_CHECK(is_floating(grad_output.dtype()), kOp, ": expected a floating dtype, got ",
               dtype_short_name(grad_output.dtype()));
  if (out.numel() == 0) return out;
  // Rows feeding result row k: rows[offsets[k] .. offsets[k + 1]), in index order.
  const Tensor offsets = make_tensor({num_weights + 1}, DType::kInt64, kCPU);
  auto* off = static_cast<int64_t*>(offsets.raw_data());
  std::fill(off, off + num_weights + 1, 0);
  for (const int64_t k : idx) {
    if (k != padding_idx) ++off[k + 1];
  }
  for (int64_t k = 0; k < num_weights; ++k) off[k + 1] += off[k];
  const Tensor rows = make_tensor({off[num_weights]}, DType::kInt64, kCPU);
  auto* rp = static_cast<int64_t*>(rows.raw_data());
  std::vector<int64_t> next(off, off + num_weights);
  for (size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] != padding_idx) rp[next[static_cast<size_t>(idx[i])]++] = static_cast<int64_t>(i);
  }
  const Tensor d_offsets = on_device(offsets, DType::kInt64, dev);
  const Tensor d_rows = on_device(rows, DType::kInt64, dev);
  const Tensor g = on_device(grad_output, grad_output.dtype(), dev);
  DeviceGuard guard(dev);
  launch_embedding_backward(code_of(grad_output.dtype()), g.raw_data(),
                            static_cast<const int64_t*>(d_offsets.raw_data()),
                            static_cast<const int64_t*>(d_rows.raw_data()), out.raw_data(), num_weights, width,
                            scale_grad_by_freq);
  return out;
}

Tensor triangle_cuda(const Tensor& self, int64_t diagonal, std::string_view name, bool lower) {
  check_triangle_input(self, name);
  const Device dev = require_device(self.device(), str_cat("aten::", name));
  Tensor out = empty_cuda(self.sizes(), self.dtype(), dev);
  if (out.numel() == 0) return out;
  const Tensor src = contiguous_cuda(self);
  const int64_t rows = self.size(-2), cols = self.size(-1);
  DeviceGuard guard(dev);
  // As the CPU's: j - i lies in [-rows, cols], so the kernel's i + diagonal cannot overflow.
  launch_triangle(static_cast<int>(self.element_size()), lower, src.raw_data(), out.raw_data(),
                  self.numel() / (rows * cols), rows, cols, std::clamp(diagonal, -rows - 1, cols + 1));
  return out;
}

Tensor tril_cuda(const Tensor& self, int64_t diagonal) { return triangle_cuda(self, diagonal, "tril", true); }
Tensor triu_cuda(const Tensor& self, int64_t diagonal) { return triangle_cuda(self, diagonal, "triu", false); }

template <bool kMax>
Tensor arg_reduce_cuda(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  const std::string_view name = kMax ? "argmax" : "argmin";
  const std::string op = str_cat("aten::", name);
  OPSPEC_CHECK(self.dtype() != DType::kBool, op, ": \"", device_kernel_name(name, self.device()),
               "\" not implemented for 'Bool'");
  const SizeVec sizes = arg_reduction_shape(self, dim, keepdim, name);
  const Device dev = require_device(self.device(), op);
  Tensor out = empty_cuda(sizes, DType::kInt64, dev);
  // [outer, n, inner] around the reduced dim (all of self when dim is None).
  int64_t outer = 1, n = self.numel(), inner = 1;
  if (dim && self.dim() > 0) {
    const int64_t d = wrap_dim(*dim, self.dim(), op);
    n = self.size(d);
    for (int64_t i = 0; i < d; ++i) outer *= self.size(i);
    for (int64_t i = d + 1; i < self.dim(); ++i) inner *= self.size(i);
  }
  if (out.numel() == 0) return out;
  const Tensor src = contiguous_cuda(self);
  DeviceGuard guard(dev);
  launch_arg_reduce(code_of(self.dtype()), kMax, src.raw_data(), static_cast<int64_t*>(out.raw_data()), outer, n,
                    inner);
  return out;
}

Tensor argmax_cuda(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg_reduce_cuda<true>(self, dim, keepdim);
}
Tensor argmin_cuda(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg_reduce_cuda<false>(self, dim, keepdim);
}

// ---- nll_loss ----

// ceil_log2 and the level power: See Note [Cascade sum of nll_loss] in kernels/cpu/loss.cc.
int64_t ceil_log2(int64_t x) {
  if (x <= 2) return 1;
  return 64 - __builtin_clzll(static_cast<uint64_t>(x - 1));
}

// nll_forward: nll_loss_forward and nll_loss2d_forward (See NllLossGeometry).
std::tuple<Tensor, Tensor> nll_forward(const NllLossGeometry& g, const Tensor& self, const Tensor& target,
                                       const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                                       std::string_view op) {
  const Device dev = op_device({self, target, weight ? *weight : Tensor()}, op);
  Tensor out = empty_cuda(g.out_sizes, self.dtype(), dev);
  Tensor total = empty_cuda({}, self.dtype(), dev);
  const Tensor t = on_device(target, DType::kInt64, dev);
  check_targets(t, g.items(), g.n_classes, ignore_index, op, dev);
  const Tensor x = on_device(self, self.dtype(), dev);
  const Tensor w = weight ? on_device(*weight, self.dtype(), dev) : Tensor();
  NllLossArgs a;
  a.x = x.raw_data();
  a.target = static_cast<const int64_t*>(t.raw_data());
  a.weight = w.defined() ? w.raw_data() : nullptr;
  a.batch = g.batch;
  a.n_classes = g.n_classes;
  a.map = g.map;
  a.ignore_index = ignore_index;
  a.elementwise = reduction == static_cast<int64_t>(Reduction::kNone) && g.has_batch;
  a.mean = reduction == static_cast<int64_t>(Reduction::kMean);
  a.level_power = std::max<int64_t>(4, ceil_log2(g.items()) / 8);
  a.out = out.raw_data();
  a.total = total.raw_data();
  DeviceGuard guard(dev);
  launch_nll_loss(code_of(self.dtype()), a);
  return {out, total};
}

// nll_backward: -weight[t] * grad (grad / total_weight for mean) at each
// item's target class, zero elsewhere and for ignored targets.
Tensor nll_backward(const NllLossGeometry& g, const Tensor& grad_output, const Tensor& self, const Tensor& target,
                    const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                    const Tensor& total_weight, std::string_view op) {
  const Device dev = op_device({self, target, weight ? *weight : Tensor(), grad_output, total_weight}, op);
  Tensor out = empty_cuda(self.sizes(), self.dtype(), dev);
  const Tensor t = on_device(target, DType::kInt64, dev);
  check_targets(t, g.items(), g.n_classes, ignore_index, op, dev);
  DeviceGuard guard(dev);
  if (out.numel() == 0) return out;
  check(cudaMemsetAsync(out.raw_data(), 0, static_cast<size_t>(out.nbytes()), nullptr), op);
  const Tensor go = on_device(grad_output, self.dtype(), dev);
  const Tensor w = weight ? on_device(*weight, self.dtype(), dev) : Tensor();
  const Tensor tw = on_device(total_weight, DType::kFloat64, dev);
  NllLossArgs a;
  a.target = static_cast<const int64_t*>(t.raw_data());
  a.weight = w.defined() ? w.raw_data() : nullptr;
  a.batch = g.batch;
  a.n_classes = g.n_classes;
  a.map = g.map;
  a.ignore_index = ignore_index;
  a.elementwise = reduction == static_cast<int64_t>(Reduction::kNone) && g.has_batch;
  a.mean = reduction == static_cast<int64_t>(Reduction::kMean);
  a.out = out.raw_data();
  a.grad = go.raw_data();
  a.total_weight = static_cast<const double*>(tw.raw_data());
  launch_nll_loss_backward(code_of(self.dtype()), a);
  return out;
}

std::tuple<Tensor, Tensor> nll_loss_forward_cuda(const Tensor& self, const Tensor& target,
                                                 const std::optional<Tensor>& weight, int64_t reduction,
                                                 int64_t ignore_index) {
  constexpr std::string_view kOp = "aten::nll_loss_forward";
  const NllLossGeometry g = nll_loss_geometry(self, target, weight, reduction, kOp);
  return nll_forward(g, self, target, weight, reduction, ignore_index, kOp);
}

Tensor nll_loss_backward_cuda(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                              const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                              const Tensor& total_weight) {
  constexpr std::string_view kOp = "aten::nll_loss_backward";
  nll_loss_backward_meta(grad_output, self, target, weight, reduction, ignore_index, total_weight);
  const NllLossGeometry g = nll_loss_geometry(self, target, weight, reduction, kOp);
  return nll_backward(g, grad_output, self, target, weight, reduction, ignore_index, total_weight, kOp);
}

// nll_loss2d_forward: an empty target reduces to NaN (mean) or 0, as the CPU's.
std::tuple<Tensor, Tensor> nll_loss2d_forward_cuda(const Tensor& self, const Tensor& target,
                                                   const std::optional<Tensor>& weight, int64_t reduction,
                                                   int64_t ignore_index) {
  constexpr std::string_view kOp = "aten::nll_loss2d_forward";
  const NllLossGeometry g = nll_loss2d_geometry(self, target, weight, reduction, kOp);
  if (g.items() == 0 && reduction != static_cast<int64_t>(Reduction::kNone)) {
    const Device dev = op_device({self, target, weight ? *weight : Tensor()}, kOp);
    const bool mean = reduction == static_cast<int64_t>(Reduction::kMean);
    Tensor out = make_tensor({}, DType::kFloat64, kCPU), total = make_tensor({}, DType::kFloat64, kCPU);
    *out.data_ptr<double>() = mean ? std::numeric_limits<double>::quiet_NaN() : 0.0;
    *total.data_ptr<double>() = 0.0;
    return {on_device(out, self.dtype(), dev), on_device(total, self.dtype(), dev)};
  }
  return nll_forward(g, self, target, weight, reduction, ignore_index, kOp);
}

Tensor nll_loss2d_backward_cuda(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                                const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                                const Tensor& total_weight) {
  constexpr std::string_view kOp = "aten::nll_loss2d_backward";
  nll_loss2d_backward_meta(grad_output, self, target, weight, reduction, ignore_index, total_weight);
  const NllLossGeometry g = nll_loss2d_geometry(self, target, weight, reduction, kOp);
  return nll_backward(g, grad_output, self, target, weight, reduction, ignore_index, total_weight, kOp);
}

// ---- _safe_softmax ----

// _safe_softmax: as kernels/cpu/softmax.cc: softmax of self converted to
// dtype (softmax's checks, under aten::_softmax), then zeros for the rows
// whose inputs are all -inf.
// bitwise_not: the CPU kernel's dtype rule (runtime/ops/elementwise_rules.h) on a contiguous copy.
Tensor bitwise_not_cuda(const Tensor& self) {
  const ElementwiseMeta m = bitwise_not_meta(self);
  const Device dev = require_device(m.device, "aten::bitwise_not");
  Tensor out = make_elementwise_output(m, dev);
  if (out.numel() == 0) return out;
  // A flat launch needs the source laid out as out is (both dense, one layout).
  const bool same_layout = (self.is_contiguous() && out.is_contiguous()) ||
                           (self.strides() == out.strides() && is_non_overlapping_and_dense(self));
  Tensor src = self;
  if (!same_layout) {
    src = make_elementwise_output(m, dev);
    copy_between(src, self);
  }
  DeviceGuard guard(dev);
  launch_bitwise_not(code_of(self.dtype()), src.raw_data(), out.raw_data(), out.numel());
  return out;
}

Tensor safe_softmax_cuda(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  constexpr std::string_view kOp = "aten::_safe_softmax";
  const DType dt = dtype.value_or(self.dtype());
  // softmax's checks on the converted input's geometry, before any copy.
  const int64_t d = softmax_dim(make_tensor(self.sizes(), dt, kMeta), dim, false, /*is_cpu=*/false, "aten::_softmax");
  const Device dev = require_device(self.device(), kOp);
  Tensor out = empty_cuda(self.sizes(), dt, dev);
  if (self.numel() == 0) return out;
  const Tensor in = contiguous_cuda(self, dt);
  int64_t outer = 1, inner = 1;
  const int64_t len = self.dim() == 0 ? 1 : self.sizes()[d];
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i < d) outer *= self.sizes()[i];
    if (i > d) inner *= self.sizes()[i];
  }
  DeviceGuard guard(dev);
  launch_softmax(code_of(dt), /*log=*/false, in.raw_data(), out.raw_data(), outer, len, inner);
  launch_zero_masked_rows(code_of(dt), in.raw_data(), out.raw_data(), outer, len, inner);
  return out;
}

// ---- Attention (See Note [CUDA attention] in nn.cu) ----

// sdpa_args: the geometry and operands (q, k, v contiguous on dev in query's
// dtype, the mask in the compute type broadcast to (B, H, L, S) as the CPU's
// MaskView does).
SdpaArgs sdpa_args(const SdpaGeometry& g, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                   bool is_causal) {
  SdpaArgs a;
  a.q = q.raw_data();
  a.k = k.raw_data();
  a.v = v.raw_data();
  if (mask.defined()) {
    a.mask = mask.raw_data();
    const int64_t nd = mask.dim();
    int64_t s = 1;
    for (int64_t i = nd - 1; i >= 0; --i) {
      const int64_t size = mask.size(i);
      a.mask_strides[4 - nd + i] = size == 1 ? 0 : s;
      s *= size;
    }
  }
  a.batch = g.batch;
  a.heads = g.heads;
  a.q_len = g.q_len;
  a.kv_len = g.kv_len;
  a.head_dim = g.head_dim;
  a.v_head_dim = g.v_head_dim;
  a.scale = g.scale;
  a.causal = is_causal;
  return a;
}

// copy_strides: t's 4 strides into s.
void copy_strides(const Tensor& t, int64_t (&s)[4]) { std::copy(t.strides().begin(), t.strides().end(), s); }

// scratch_for: sdpa_scratch_bytes of device memory (an empty tensor when none is needed).
Tensor scratch_for(DType dtype, const SdpaArgs& a, bool backward, Device dev) {
  const int64_t bytes = sdpa_scratch_bytes(code_of(dtype), a, backward);
  return bytes > 0 ? empty_cuda({bytes}, DType::kBool, dev) : Tensor();
}

std::tuple<Tensor, Tensor> sdpa_flash_cuda(const Tensor& query, const Tensor& key, const Tensor& value,
                                           double dropout_p, bool is_causal, const std::optional<Tensor>& attn_mask,
                                           std::optional<double> scale) {
  constexpr std::string_view kOp = "aten::_scaled_dot_product_flash_attention_for_cpu";
  const SdpaGeometry g = sdpa_geometry(query, key, value, attn_mask, scale, dropout_p, kOp);
  const Device dev = op_device({query, key, value, attn_mask ? *attn_mask : Tensor()}, kOp);
  auto [out, lse] = sdpa_outputs(g, query, dev);
  if (out.numel() == 0 && lse.numel() == 0) return {out, lse};  // a head dim of 0 still has a logsumexp per row
  const DType dt = query.dtype();
  const Tensor q = on_device(query, dt, dev), k = on_device(key, dt, dev), v = on_device(value, dt, dev);
  const Tensor mask = attn_mask ? on_device(*attn_mask, compute_dtype(dt), dev) : Tensor();
  SdpaArgs a = sdpa_args(g, q, k, v, mask, is_causal);
  a.out = out.raw_data();  // query's layout (sdpa_outputs)
  copy_strides(out, a.out_strides);
  a.lse = lse.raw_data();  // the (B, L, H) buffer lse is a transpose of
  const Tensor scratch = scratch_for(dt, a, /*backward=*/false, dev);
  a.scratch = scratch.defined() ? scratch.raw_data() : nullptr;
  DeviceGuard guard(dev);
  launch_sdpa_forward(code_of(dt), a);
  return {out, lse};
}

std::tuple<Tensor, Tensor, Tensor> sdpa_flash_cuda_backward(const Tensor& grad_out, const Tensor& query,
                                                            const Tensor& key, const Tensor& value, const Tensor& out,
                                                            const Tensor& logsumexp, double dropout_p, bool is_causal,
                                                            const std::optional<Tensor>& attn_mask,
                                                            std::optional<double> scale) {
  constexpr std::string_view kOp = "aten::_scaled_dot_product_flash_attention_for_cpu_backward";
  sdpa_flash_cpu_backward_meta(grad_out, query, key, value, out, logsumexp, dropout_p, is_causal, attn_mask, scale);
  const SdpaGeometry g = sdpa_geometry(query, key, value, attn_mask, scale, dropout_p, kOp);
  const Device dev =
      op_device({query, key, value, attn_mask ? *attn_mask : Tensor(), grad_out, out, logsumexp}, kOp);
  // (B, H, N, E) views of (B, N, H, E) buffers, as PyTorch's kernel returns them.
  Tensor dq = make_strided(query.sizes(), heads_last_strides(query.sizes()), query.dtype(), dev);
  Tensor dk = make_strided(key.sizes(), heads_last_strides(key.sizes()), key.dtype(), dev);
  Tensor dv = make_strided(value.sizes(), heads_last_strides(value.sizes()), value.dtype(), dev);
  DeviceGuard guard(dev);
  if (query.numel() == 0 || key.numel() == 0) {
    // Nothing attends: every gradient is zero.
    for (const Tensor* t : {&dq, &dk, &dv}) {
      if (t->numel() > 0) check(cudaMemsetAsync(t->raw_data(), 0, static_cast<size_t>(t->nbytes()), nullptr), kOp);
    }
    return {dq, dk, dv};
  }
  const DType dt = query.dtype();
  const DType kC = compute_dtype(dt);
  const Tensor q = on_device(query, dt, dev), k = on_device(key, dt, dev), v = on_device(value, dt, dev);
  const Tensor mask = attn_mask ? on_device(*attn_mask, kC, dev) : Tensor();
  // The CPU kernel's compute-type copies (grad_out and out may have another dtype).
  const Tensor dout = on_device(grad_out, kC, dev), o = on_device(out, kC, dev);
  const Tensor lse = on_device(logsumexp, kC, dev);
  const Tensor delta = empty_cuda({g.batch * g.heads * g.q_len}, kC, dev);
  SdpaArgs a = sdpa_args(g, q, k, v, mask, is_causal);
  a.dout = dout.raw_data();
  a.o = o.raw_data();
  a.lse_in = lse.raw_data();
  a.dq = dq.raw_data();
  a.dk = dk.raw_data();
  a.dv = dv.raw_data();
  copy_strides(dq, a.dq_strides);
  copy_strides(dk, a.dk_strides);
  copy_strides(dv, a.dv_strides);
  a.delta = delta.raw_data();
  const Tensor scratch = scratch_for(dt, a, /*backward=*/true, dev);
  a.scratch = scratch.defined() ? scratch.raw_data() : nullptr;
  launch_sdpa_backward(code_of(dt), a);
  return {dq, dk, dv};
}

}  // namespace

void register_nn_cuda_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kCUDA;
  lib.impl("_safe_softmax", kKey, &safe_softmax_cuda)
      .impl("bitwise_not", kKey, &bitwise_not_cuda)
      .impl("index_select", kKey, &index_select_cuda)
      .impl("embedding", kKey, &embedding_cuda)
      .impl("embedding_dense_backward", kKey, &embedding_dense_backward_cuda)
      .impl("tril", kKey, &tril_cuda)
      .impl("triu", kKey, &triu_cuda)
      .impl("argmax", kKey, &argmax_cuda)
      .impl("argmin", kKey, &argmin_cuda)
      .impl("nll_loss_forward", kKey, &nll_loss_forward_cuda)
      .impl("nll_loss_backward", kKey, &nll_loss_backward_cuda)
      .impl("nll_loss2d_forward", kKey, &nll_loss2d_forward_cuda)
      .impl("nll_loss2d_backward", kKey, &nll_loss2d_backward_cuda)
      .impl("_scaled_dot_product_flash_attention_for_cpu", kKey, &sdpa_flash_cuda)
      .impl("_scaled_dot_product_flash_attention_for_cpu_backward", kKey, &sdpa_flash_cuda_backward);
}

}  // namespace opspec::internal::cuda
