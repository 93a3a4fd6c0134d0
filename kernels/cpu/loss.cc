// loss.cc: CPU kernels of nll_loss_forward and nll_loss_backward, summing as
// PyTorch's nll_loss_out_frame does (See Note [Cascade sum of nll_loss]).
#include <algorithm>
#include <array>
#include <cstring>

#include "kernels/common/nn_meta.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/loops.h"

namespace opspec::internal {

namespace {

using loops_detail::load;
using loops_detail::store;

// Note [Cascade sum of nll_loss]
// PyTorch sums the picked log-probabilities of a batch in 8 levels of
// partial sums: each element goes into level 0, and every 2^p elements
// (p = max(4, ceil(log2(batch)) / 8)) a level is added into the next one and
// cleared; the levels are then added in order. We keep the same order so the
// loss has PyTorch's bits, not just its value.
constexpr int kCascadeLevels = 8;

int64_t ceil_log2(int64_t x) {
  if (x <= 2) return 1;
  return 64 - __builtin_clzll(static_cast<uint64_t>(x - 1));
}

void check_target(int64_t t, int64_t n_classes, std::string_view op) {
  OPSPEC_CHECK(t >= 0 && t < n_classes, op, ": Target ", t, " is out of bounds.");
}

}  // namespace

std::tuple<Tensor, Tensor> nll_loss_forward_cpu(const Tensor& self, const Tensor& target,
                                                const std::optional<Tensor>& weight, int64_t reduction,
                                                int64_t ignore_index) {
  constexpr std::string_view kOp = "aten::nll_loss_forward";
  require_cpu_device(self.device(), kOp);
  const NllLossGeometry g = nll_loss_geometry(self, target, weight, reduction, kOp);
  Tensor out = make_tensor(g.out_sizes, self.dtype(), kCPU);
  Tensor total = make_tensor({}, self.dtype(), kCPU);
  const Tensor t = contiguous_cpu(target);
  const auto* tp = static_cast<const int64_t*>(t.raw_data());
  OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), kOp, [&] {
    using C = opmath_t<scalar_t>;
    const Tensor x = contiguous_cpu(self);
    const auto* xp = static_cast<const scalar_t*>(x.raw_data());
    const Tensor w = weight ? contiguous_cpu(*weight) : Tensor();
    const auto* wp = w.defined() ? static_cast<const scalar_t*>(w.raw_data()) : nullptr;
    const int64_t n = g.n_classes;
    if (reduction == static_cast<int64_t>(Reduction::kNone) && g.has_batch) {
      auto* op = out.data_ptr<scalar_t>();
      for (int64_t b = 0; b < g.batch; ++b) {
        const int64_t c = tp[b];
        if (c == ignore_index) {
          store(op + b, C(0));
          continue;
        }
        check_target(c, n, kOp);
        const C wv = wp != nullptr ? load(wp[c]) : C(1);
        store(op + b, -load(xp[b * n + c]) * wv);
      }
      store(total.data_ptr<scalar_t>(), C(0));
      return;
    }
    const int64_t level_power = std::max<int64_t>(4, ceil_log2(g.batch) / kCascadeLevels);
    const int64_t level_mask = (int64_t{1} << level_power) - 1;
    std::array<C, kCascadeLevels> loss{}, wsum{};
    int64_t ignored = 0;
    for (int64_t b = 0; b < g.batch; ++b) {
      const int64_t c = tp[b];
      if (c == ignore_index) {
        ++ignored;
        continue;
      }
      check_target(c, n, kOp);
      const C v = load(xp[b * n + c]);
      if (wp != nullptr) {
        const C wv = load(wp[c]);
        loss[0] += v * wv;
        wsum[0] += wv;
      } else {
        loss[0] += v;
      }
      for (int j = 0; j + 1 < kCascadeLevels; ++j) {
        if ((b & (level_mask << (j * level_power))) != 0) break;
        wsum[j + 1] += wsum[j];
        loss[j + 1] += loss[j];
        wsum[j] = 0;
        loss[j] = 0;
      }
    }
    C total_weight = static_cast<C>(g.batch - ignored);
    if (wp != nullptr) {
      total_weight = 0;
      for (const C s : wsum) total_weight += s;
    }
    C value = 0;
    for (const C s : loss) value += s;
    if (reduction == static_cast<int64_t>(Reduction::kMean)) value /= total_weight;
    store(out.data_ptr<scalar_t>(), -value);
    store(total.data_ptr<scalar_t>(), total_weight);
  });
  return {out, total};
}

// nll_loss_backward: -weight[t] * grad (grad / total_weight for mean) at each
// picked class, zero elsewhere and for ignored targets.
Tensor nll_loss_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                             const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                             const Tensor& total_weight) {
  constexpr std::string_view kOp = "aten::nll_loss_backward";
  require_cpu_device(self.device(), kOp);
  nll_loss_backward_meta(grad_output, self, target, weight, reduction, ignore_index, total_weight);
  const NllLossGeometry g = nll_loss_geometry(self, target, weight, reduction, kOp);
  Tensor out = make_tensor(self.sizes(), self.dtype(), kCPU);
  zero_bytes(out);
  const Tensor t = contiguous_cpu(target);
  const auto* tp = static_cast<const int64_t*>(t.raw_data());
  OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), kOp, [&] {
    using C = opmath_t<scalar_t>;
    const Tensor go = contiguous_cpu(grad_output, self.dtype());
    const auto* gp = static_cast<const scalar_t*>(go.raw_data());
    const Tensor w = weight ? contiguous_cpu(*weight) : Tensor();
    const auto* wp = w.defined() ? static_cast<const scalar_t*>(w.raw_data()) : nullptr;
    auto* op = out.data_ptr<scalar_t>();
    const int64_t n = g.n_classes;
    const bool elementwise = reduction == static_cast<int64_t>(Reduction::kNone) && g.has_batch;
    C scalar_grad = load(gp[0]);
    if (!elementwise && reduction == static_cast<int64_t>(Reduction::kMean)) {
      scalar_grad /= static_cast<C>(read_scalar(contiguous_cpu(total_weight)).to_double());
    }
    for (int64_t b = 0; b < g.batch; ++b) {
      const int64_t c = tp[b];
      if (c == ignore_index) continue;
      check_target(c, n, kOp);
      const C gv = -(elementwise ? load(gp[b]) : scalar_grad);
      store(op + b * n + c, wp != nullptr ? load(wp[c]) * gv : gv);
    }
  });
  return out;
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
