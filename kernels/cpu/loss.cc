// loss.cc: CPU kernels of nll_loss_forward, nll_loss2d_forward and their
// backward ops, summing as PyTorch's nll_loss_out_frame does (See Note
// [Cascade sum of nll_loss]), and of mse_loss.
#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/functional/function_ref.h"
#include "kernels/common/nn_meta.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/loops.h"

namespace opspec::internal {

namespace {

using loops_detail::load;
using loops_detail::store;

// Note [Cascade sum of nll_loss]
// PyTorch sums the picked log-probabilities of a batch in 8 levels of
// partial sums: each item goes into level 0, and every 2^p items (p = max(4,
// ceil(log2(items)) / 8)) a level is added into the next one and cleared;
// the levels are then added in order. Like PyTorch's nll_loss_out_frame and
// nll_loss2d_forward_out_frame, the sums subtract each term (so a loss of
// zero is +0) in the input's dtype, every operation rounded to it (f16 and
// bf16 too, as c10::Half arithmetic rounds), so the loss has PyTorch's bits,
// not just its value.
constexpr int kCascadeLevels = 8;

int64_t ceil_log2(int64_t x) {
  if (x <= 2) return 1;
  return 64 - __builtin_clzll(static_cast<uint64_t>(x - 1));
}

void check_target(int64_t t, int64_t n_classes, std::string_view op) {
  OPSPEC_CHECK(t >= 0 && t < n_classes, op, ": Target ", t, " is out of bounds.");
}

// rounded: v rounded to T (and back to T's compute type): one T operation's result.
template <class T>
opmath_t<T> rounded(opmath_t<T> v) {
  T r;
  store(&r, v);
  return load(r);
}

// nll_forward_frame: out (one loss per item, or the reduced loss) and total
// weight of nll_loss_forward and nll_loss2d_forward (See NllLossGeometry).
template <class T>
void nll_forward_frame(const NllLossGeometry& g, const T* xp, const int64_t* tp, const T* wp, int64_t reduction,
                       int64_t ignore_index, T* out, T* total, std::string_view op) {
  using C = opmath_t<T>;
  const int64_t n = g.n_classes, map = g.map, items = g.items();
  const auto at = [&](int64_t i, int64_t c) { return ((i / map) * n + c) * map + i % map; };
  if (reduction == static_cast<int64_t>(Reduction::kNone) && g.has_batch) {
    for (int64_t i = 0; i < items; ++i) {
      const int64_t c = tp[i];
      if (c == ignore_index) {
        store(out + i, C(0));
        continue;
      }
      check_target(c, n, op);
      store(out + i, -load(xp[at(i, c)]) * (wp != nullptr ? load(wp[c]) : C(1)));
    }
    store(total, C(0));
    return;
  }
  const int64_t level_power = std::max<int64_t>(4, ceil_log2(items) / kCascadeLevels);
  const int64_t level_mask = (int64_t{1} << level_power) - 1;
  std::array<C, kCascadeLevels> loss{}, wsum{};
  int64_t ignored = 0;
  for (int64_t i = 0; i < items; ++i) {
    const int64_t c = tp[i];
    if (c == ignore_index) {
      ++ignored;
      continue;
    }
    check_target(c, n, op);
    const C v = load(xp[at(i, c)]);
    if (wp != nullptr) {
      const C wv = load(wp[c]);
      loss[0] = rounded<T>(loss[0] - rounded<T>(v * wv));
      wsum[0] = rounded<T>(wsum[0] + wv);
    } else {
      loss[0] = rounded<T>(loss[0] - v);
    }
    for (int j = 0; j + 1 < kCascadeLevels; ++j) {
      if ((i & (level_mask << (j * level_power))) != 0) break;
      wsum[j + 1] = rounded<T>(wsum[j + 1] + wsum[j]);
      loss[j + 1] = rounded<T>(loss[j + 1] + loss[j]);
      wsum[j] = 0;
      loss[j] = 0;
    }
  }
  C total_weight = rounded<T>(static_cast<C>(items - ignored));
  if (wp != nullptr) {
    total_weight = 0;
    for (const C s : wsum) total_weight = rounded<T>(total_weight + s);
  }
  C value = 0;
  for (const C s : loss) value = rounded<T>(value + s);
  if (reduction == static_cast<int64_t>(Reduction::kMean)) value /= total_weight;
  store(out, value);
  store(total, total_weight);
}

// nll_backward_frame: -weight[t] * grad (grad / total_weight for mean) at
// each item's target class, zero elsewhere and for ignored targets; out is
// zeroed by the caller.
template <class T>
void nll_backward_frame(const NllLossGeometry& g, const T* gp, const int64_t* tp, const T* wp, int64_t reduction,
                        int64_t ignore_index, const Tensor& total_weight, T* out, std::string_view op) {
  using C = opmath_t<T>;
  const int64_t n = g.n_classes, map = g.map, items = g.items();
  const bool elementwise = reduction == static_cast<int64_t>(Reduction::kNone) && g.has_batch;
  // An unreduced gradient may be empty (an empty batch): read the one value only when reduced.
  C scalar_grad = elementwise ? C(0) : load(gp[0]);
  if (!elementwise && reduction == static_cast<int64_t>(Reduction::kMean)) {
    T tw;
    store(&tw, read_scalar(contiguous_cpu(total_weight)).to_double());
    scalar_grad = rounded<T>(scalar_grad / load(tw));
  }
  for (int64_t i = 0; i < items; ++i) {
    const int64_t c = tp[i];
    if (c == ignore_index) continue;
    check_target(c, n, op);
    const C gv = -(elementwise ? load(gp[i]) : scalar_grad);
    store(out + ((i / map) * n + c) * map + i % map, wp != nullptr ? load(wp[c]) * gv : gv);
  }
}

// nll_forward: nll_forward_frame on contiguous copies.
std::tuple<Tensor, Tensor> nll_forward(const NllLossGeometry& g, const Tensor& self, const Tensor& target,
                                       const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                                       std::string_view op) {
  Tensor out = make_tensor(g.out_sizes, self.dtype(), kCPU);
  Tensor total = make_tensor({}, self.dtype(), kCPU);
  const Tensor t = contiguous_cpu(target);
  OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), op, [&] {
    const Tensor x = contiguous_cpu(self);
    const Tensor w = weight ? contiguous_cpu(*weight) : Tensor();
    nll_forward_frame<scalar_t>(g, static_cast<const scalar_t*>(x.raw_data()),
                                static_cast<const int64_t*>(t.raw_data()),
                                w.defined() ? static_cast<const scalar_t*>(w.raw_data()) : nullptr, reduction,
                                ignore_index, static_cast<scalar_t*>(out.raw_data()), total.data_ptr<scalar_t>(), op);
  });
  return {out, total};
}

// nll_backward: nll_backward_frame into a zeroed gradient of self's shape.
Tensor nll_backward(const NllLossGeometry& g, const Tensor& grad_output, const Tensor& self, const Tensor& target,
                    const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                    const Tensor& total_weight, std::string_view op) {
  Tensor out = make_tensor(self.sizes(), self.dtype(), kCPU);
  zero_bytes(out);
  const Tensor t = contiguous_cpu(target);
  OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), op, [&] {
    const Tensor go = contiguous_cpu(grad_output, self.dtype());
    const Tensor w = weight ? contiguous_cpu(*weight) : Tensor();
    nll_backward_frame<scalar_t>(g, static_cast<const scalar_t*>(go.raw_data()),
                                 static_cast<const int64_t*>(t.raw_data()),
                                 w.defined() ? static_cast<const scalar_t*>(w.raw_data()) : nullptr, reduction,
                                 ignore_index, total_weight, static_cast<scalar_t*>(out.raw_data()), op);
  });
  return out;
}

}  // namespace

std::tuple<Tensor, Tensor> nll_loss_forward_cpu(const Tensor& self, const Tensor& target,
                                                const std::optional<Tensor>& weight, int64_t reduction,
                                                int64_t ignore_index) {
  constexpr std::string_view kOp = "aten::nll_loss_forward";
  require_cpu_device(self.device(), kOp);
  const NllLossGeometry g = nll_loss_geometry(self, target, weight, reduction, kOp);
  return nll_forward(g, self, target, weight, reduction, ignore_index, kOp);
}

Tensor nll_loss_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                             const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                             const Tensor& total_weight) {
  constexpr std::string_view kOp = "aten::nll_loss_backward";
  require_cpu_device(self.device(), kOp);
  nll_loss_backward_meta(grad_output, self, target, weight, reduction, ignore_index, total_weight);
  const NllLossGeometry g = nll_loss_geometry(self, target, weight, reduction, kOp);
  return nll_backward(g, grad_output, self, target, weight, reduction, ignore_index, total_weight, kOp);
}

// nll_loss2d_forward: nll_loss over [N, C, H, W] log-probabilities and
// [N, H, W] targets; an empty target reduces to NaN (mean) or 0, as PyTorch's.
std::tuple<Tensor, Tensor> nll_loss2d_forward_cpu(const Tensor& self, const Tensor& target,
                                                  const std::optional<Tensor>& weight, int64_t reduction,
                                                  int64_t ignore_index) {
  constexpr std::string_view kOp = "aten::nll_loss2d_forward";
  require_cpu_device(self.device(), kOp);
  const NllLossGeometry g = nll_loss2d_geometry(self, target, weight, reduction, kOp);
  if (g.items() == 0 && reduction != static_cast<int64_t>(Reduction::kNone)) {
    const bool mean = reduction == static_cast<int64_t>(Reduction::kMean);
    Tensor out = make_tensor({}, self.dtype(), kCPU), total = make_tensor({}, self.dtype(), kCPU);
    OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), kOp, [&] {
      store(out.data_ptr<scalar_t>(), mean ? std::numeric_limits<double>::quiet_NaN() : 0.0);
      store(total.data_ptr<scalar_t>(), 0.0);
    });
    return {out, total};
  }
  return nll_forward(g, self, target, weight, reduction, ignore_index, kOp);
}

Tensor nll_loss2d_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                               const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                               const Tensor& total_weight) {
  constexpr std::string_view kOp = "aten::nll_loss2d_backward";
  require_cpu_device(self.device(), kOp);
  nll_loss2d_backward_meta(grad_output, self, target, weight, reduction, ignore_index, total_weight);
  const NllLossGeometry g = nll_loss2d_geometry(self, target, weight, reduction, kOp);
  return nll_backward(g, grad_output, self, target, weight, reduction, ignore_index, total_weight, kOp);
}

void log_softmax_at_rows(const Tensor& rows, const int64_t* target, int64_t ignore_index, const Tensor& out);  // softmax.cc

// cross_entropy_rows_cpu: See CrossEntropyRowsFn in runtime/fused/
// cross_entropy_rows.h. Eager's path for these operands is the reshape's copy,
// _log_softmax over it and nll_loss_forward: the picked log-probabilities
// have _log_softmax's bits (log_softmax_at_rows), and the cascade sums them as
// nll_forward_frame sums the rows of the copy, here over one class per row.
bool cross_entropy_rows_cpu(const Tensor& rows, const Tensor& target, int64_t reduction, int64_t ignore_index,
                            const Tensor& loss, absl::FunctionRef<void()> start) {
  constexpr std::string_view kOp = "aten::nll_loss_forward";
  const DType dtype = rows.dtype();
  if ((dtype != DType::kFloat32 && dtype != DType::kFloat64) || (rows.dim() != 2 && rows.dim() != 3)) return false;
  if (reduction != static_cast<int64_t>(Reduction::kMean) && reduction != static_cast<int64_t>(Reduction::kSum)) {
    return false;
  }
  const int64_t classes = rows.size(-1), items = rows.numel() / std::max<int64_t>(classes, 1);
  if (classes == 0 || items == 0 || (rows.stride(-1) != 1 && classes > 1)) return false;
  if (target.dtype() != DType::kInt64 || target.dim() != 1 || target.size(0) != items || loss.dtype() != dtype ||
      loss.dim() != 0) {
    return false;
  }
  start();
  const Tensor t = contiguous_cpu(target);
  const auto* tp = static_cast<const int64_t*>(t.raw_data());
  // One class per item: the picked one, or ignored.
  std::vector<int64_t> picked_class(static_cast<size_t>(items));
  for (int64_t i = 0; i < items; ++i) {
    if (tp[i] != ignore_index) check_target(tp[i], classes, kOp);
    picked_class[static_cast<size_t>(i)] = tp[i] == ignore_index ? ignore_index : 0;
  }
  const Tensor picked = make_tensor({items}, dtype, kCPU);
  log_softmax_at_rows(rows, tp, ignore_index, picked);
  NllLossGeometry g;
  g.batch = items;
  g.n_classes = 1;
  g.has_batch = true;
  Tensor total = make_tensor({}, dtype, kCPU);
  OPSPEC_DISPATCH_FLOATING_DTYPES(dtype, kOp, [&] {
    nll_forward_frame<scalar_t>(g, static_cast<const scalar_t*>(picked.raw_data()), picked_class.data(), nullptr,
                                reduction, ignore_index, loss.data_ptr<scalar_t>(), total.data_ptr<scalar_t>(), kOp);
  });
  return true;
}

Tensor sum_cpu(const Tensor& self, std::optional<DType> dtype);   // reduce.cc
Tensor mean_cpu(const Tensor& self, std::optional<DType> dtype);  // reduce.cc

// mse_loss: (self - target)^2, then the reduction engine's mean or sum.
Tensor mse_loss_cpu(const Tensor& self, const Tensor& target, int64_t reduction) {
  constexpr std::string_view kOp = "aten::mse_loss";
  require_cpu_device(self.device(), kOp);
  check_mse_loss(self, target, reduction, kOp);
  Tensor sq = make_tensor(self.sizes(), self.dtype(), kCPU);
  if (sq.numel() > 0) {
    const Tensor in[] = {self, target};
    TensorIterator iter(sq, in);
    OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), kOp, [&] {
      using C = opmath_t<scalar_t>;
      cpu_kernel<scalar_t, scalar_t, scalar_t>(iter, [](C a, C b) { return (a - b) * (a - b); });
    });
  }
  if (reduction == static_cast<int64_t>(Reduction::kMean)) return mean_cpu(sq, std::nullopt);
  if (reduction == static_cast<int64_t>(Reduction::kSum)) return sum_cpu(sq, std::nullopt);
  return sq;
}

// mse_loss_backward: 2 (self - target) grad_output, divided by numel for mean.
Tensor mse_loss_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                             int64_t reduction) {
  constexpr std::string_view kOp = "aten::mse_loss_backward";
  require_cpu_device(self.device(), kOp);
  mse_loss_backward_meta(grad_output, self, target, reduction);
  Tensor out = make_tensor(self.sizes(), self.dtype(), kCPU);
  if (out.numel() == 0) return out;
  const double norm = reduction == static_cast<int64_t>(Reduction::kMean) ? 2.0 / static_cast<double>(self.numel())
                                                                          : 2.0;
  // A reduced loss's one gradient broadcasts to every element (a stride-0 view).
  const Tensor gc = contiguous_cpu(grad_output, self.dtype());
  const Tensor g = gc.sizes() != self.sizes()
                       ? make_view(gc, self.sizes(), SizeVec(static_cast<size_t>(self.dim()), 0), 0)
                       : gc;
  const Tensor in[] = {self, target, g};
  TensorIterator iter(out, in);
  OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), kOp, [&] {
    using C = opmath_t<scalar_t>;
    const auto n = static_cast<C>(norm);
    cpu_kernel<scalar_t, scalar_t, scalar_t, scalar_t>(iter, [n](C a, C b, C go) { return n * (a - b) * go; });
  });
  return out;
}

}  // namespace opspec::internal
