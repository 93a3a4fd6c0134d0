// movement.cc: CPU kernels of constant_pad_nd, upsample_nearest2d (+ backward),
// flip, roll and repeat, all but the backward one gather (See Note [Separable
// gathers] in kernels/common/movement_meta.h), and the registration of this
// family's CPU and Meta kernels (group norm's are in group_norm.cc).
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/common/layout_format.h"
#include "kernels/common/movement_meta.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/parallel_rows.h"
#include "runtime/dispatch/library.h"

namespace opspec::internal {

Tensor fill_cpu(const Tensor& self, const Scalar& value);  // kernels/cpu/factory.cc
std::tuple<Tensor, Tensor, Tensor> native_group_norm_cpu(const Tensor& input, const std::optional<Tensor>& weight,
                                                         const std::optional<Tensor>& bias, int64_t N, int64_t C,
                                                         int64_t HxW, int64_t group, double eps);  // group_norm.cc
std::tuple<Tensor, Tensor, Tensor> native_group_norm_backward_cpu(const Tensor& grad_out, const Tensor& input,
                                                                  const Tensor& mean, const Tensor& rstd,
                                                                  const std::optional<Tensor>& weight, int64_t N,
                                                                  int64_t C, int64_t HxW, int64_t group,
                                                                  std::array<bool, 3> output_mask);

namespace {

// Run: `len` output elements of the last dim from o whose input offsets step by one from t.
struct Run {
  int64_t o = 0, t = 0, len = 0;
};

// last_dim_runs: the last dim's table cut into runs (padding runs have t == kPadEntry).
std::vector<Run> last_dim_runs(const int64_t* last, int64_t n) {
  std::vector<Run> runs;
  for (int64_t o = 0; o < n;) {
    const int64_t t = last[o];
    int64_t len = 1;
    if (t == kPadEntry) {
      while (o + len < n && last[o + len] == kPadEntry) ++len;
    } else {
      while (o + len < n && last[o + len] == t + len) ++len;
    }
    runs.push_back({o, t, len});
    o += len;
  }
  return runs;
}

// gather_rows_typed: the plan's rows over elements of type E (an unsigned
// type of the element's size): runs longer than one are memcpy'd, single
// elements (flip's, upsample's) assigned.
template <class E>
void gather_rows_typed(const GatherPlan& p, const E* s, E* d, E fill, int64_t rows, int64_t inner, bool parallel) {
  const auto nd = static_cast<int64_t>(p.out_sizes.size());
  const std::vector<Run> runs = last_dim_runs(p.table.data() + p.offsets.back(), inner);
  parallel_rows(rows, parallel, [&](int64_t r) {
    int64_t base = 0, rem = r;
    bool pad = false;
    for (int64_t k = nd - 2; k >= 0; --k) {
      const int64_t size = p.out_sizes[static_cast<size_t>(k)];
      const int64_t t = p.table[static_cast<size_t>(p.offsets[static_cast<size_t>(k)] + rem % size)];
      rem /= size;
      if (t == kPadEntry) {
        pad = true;
      } else {
        base += t;
      }
    }
    E* dr = d + r * inner;
    if (pad) {
      std::fill(dr, dr + inner, fill);
      return;
    }
    for (const Run& run : runs) {
      if (run.t == kPadEntry) {
        std::fill(dr + run.o, dr + run.o + run.len, fill);
      } else if (run.len == 1) {
        dr[run.o] = s[base + run.t];
      } else {
        std::memcpy(dr + run.o, s + base + run.t, static_cast<size_t>(run.len) * sizeof(E));
      }
    }
  });
}

// run_gather: out (contiguous, plan.out_sizes) from src by the plan; padding
// takes the element_size bytes at fill (null when the plan has none).
void run_gather(const GatherPlan& p, const Tensor& src, const Tensor& out, const void* fill) {
  const int64_t numel = out.numel();
  if (numel == 0) return;
  const int64_t elem = out.element_size();
  if (p.out_sizes.empty()) {  // 0-dim
    std::memcpy(out.raw_data(), src.raw_data(), static_cast<size_t>(elem));
    return;
  }
  const int64_t inner = p.out_sizes.back();
  const int64_t rows = numel / inner;
  auto run = [&]<class E>() {
    E f{};
    if (fill != nullptr) std::memcpy(&f, fill, sizeof(E));
    gather_rows_typed<E>(p, static_cast<const E*>(src.raw_data()), static_cast<E*>(out.raw_data()), f, rows, inner,
                         numel >= kParallelGrain);
  };
  switch (elem) {
    case 1: return run.operator()<uint8_t>();
    case 2: return run.operator()<uint16_t>();
    case 4: return run.operator()<uint32_t>();
    case 8: return run.operator()<uint64_t>();
    default: OPSPEC_INTERNAL_ASSERT(elem == 1 || elem == 2 || elem == 4 || elem == 8);
  }
}

// gather_to_new: a new contiguous tensor of sizes from src by make_plan(),
// which runs only once the output exists and is not empty (a huge or empty
// output fails or returns before any table is built).
template <class MakePlan>
Tensor gather_to_new(IntArrayRef sizes, const Tensor& src, MakePlan make_plan, const void* fill = nullptr) {
  Tensor out = make_tensor(sizes, src.dtype(), kCPU);
  if (out.numel() != 0) run_gather(make_plan(), src, out, fill);
  return out;
}


}  // namespace

Tensor constant_pad_nd_cpu(const Tensor& self, IntArrayRef pad, const Scalar& value) {
  constexpr std::string_view kOp = "aten::constant_pad_nd";
  require_cpu_device(self.device(), kOp);
  const SizeVec sizes = constant_pad_shape(self, pad);
  // The fill value in self's dtype, converted (and range-checked) as fill_ does.
  const Tensor host = make_tensor({}, self.dtype(), kCPU);
  fill_cpu(host, value);
  // Gathered row-major, then laid out as PyTorch allocates it (See Note [Model op layouts]).
  const Tensor out = gather_to_new(sizes, self, [&] { return constant_pad_plan(self, pad); }, host.raw_data());
  return with_strides(out, constant_pad_strides(self, pad, sizes), copy_into);
}

Tensor flip_cpu(const Tensor& self, IntArrayRef dims) {
  require_cpu_device(self.device(), "aten::flip");
  flip_mask(self, dims);  // the checks
  // PyTorch's result is empty_like(self): self's layout (preserve_format).
  const Tensor out = gather_to_new(self.sizes(), self, [&] { return flip_plan(self, dims); });
  return with_strides(out, preserve_strides(self), copy_into);
}

Tensor roll_cpu(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  require_cpu_device(self.device(), "aten::roll");
  check_roll(self, shifts, dims);
  if (!dims.empty()) {
    const Tensor out = gather_to_new(self.sizes(), self, [&] { return roll_plan(self, shifts, dims); });
    return with_strides(out, roll_strides(self, shifts, dims), copy_into);
  }
  // dims=[]: PyTorch's self.flatten().roll(shifts[0], 0).view(self.sizes()).
  const Tensor src = contiguous_cpu(self);
  const Tensor flat = make_view(src, {self.numel()}, {1}, src.storage_offset());
  const int64_t dim0[] = {0};
  return gather_to_new(self.sizes(), flat, [&] { return roll_plan(flat, shifts.subspan(0, 1), dim0); });
}

Tensor repeat_cpu(const Tensor& self, IntArrayRef repeats) {
  require_cpu_device(self.device(), "aten::repeat");
  return gather_to_new(repeat_shape(self, repeats), self, [&] { return repeat_plan(self, repeats); });
}

Tensor upsample_nearest2d_cpu(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_h,
                              std::optional<double> scales_w) {
  constexpr std::string_view kOp = "aten::upsample_nearest2d";
  require_cpu_device(self.device(), kOp);
  const Tensor out = gather_to_new(upsample_nearest2d_shape(self, output_size), self,
                                   [&] { return upsample_nearest2d_plan(self, output_size, scales_h, scales_w); });
  return in_format(out, suggest_memory_format(self), kOp, copy_into);  // See Note [Model op layouts]
}

// upsample_nearest2d_backward: each input pixel sums, in the compute type, the
// output pixels copied from it in raster order (the order PyTorch's CPU
// kernel adds them in), from the runs of nearest_source_ranges.
Tensor upsample_nearest2d_backward_cpu(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                       std::optional<double> scales_h, std::optional<double> scales_w) {
  constexpr std::string_view kOp = "aten::upsample_nearest2d_backward";
  require_cpu_device(grad_output.device(), kOp);
  check_upsample_nearest2d_backward(grad_output, output_size, input_size);
  Tensor out = make_tensor(input_size, grad_output.dtype(), kCPU);
  if (out.numel() == 0) return in_format(out, suggest_memory_format(grad_output), kOp, copy_into);
  const int64_t ih = input_size[2], iw = input_size[3], oh = output_size[0], ow = output_size[1];
  const std::vector<int64_t> rh = nearest_source_ranges(ih, oh, scales_h);
  const std::vector<int64_t> rw = nearest_source_ranges(iw, ow, scales_w);
  const int64_t planes = input_size[0] * input_size[1];
  OPSPEC_DISPATCH_FLOATING_DTYPES(grad_output.dtype(), kOp, [&] {
    using C = opmath_t<scalar_t>;  // float for f32/f16/bf16, double for f64 (See Note [Reduced precision math])
    const Tensor g = contiguous_cpu(grad_output);
    const auto* gp = static_cast<const scalar_t*>(g.raw_data());
    auto* op = out.data_ptr<scalar_t>();
    parallel_rows(planes, grad_output.numel() >= kParallelGrain, [&](int64_t plane) {
      const scalar_t* gq = gp + plane * oh * ow;
      scalar_t* oq = op + plane * ih * iw;
      for (int64_t y = 0; y < ih; ++y) {
        for (int64_t x = 0; x < iw; ++x) {
          C acc = 0;
          for (int64_t a = rh[static_cast<size_t>(2 * y)]; a < rh[static_cast<size_t>(2 * y + 1)]; ++a) {
            for (int64_t b = rw[static_cast<size_t>(2 * x)]; b < rw[static_cast<size_t>(2 * x + 1)]; ++b) {
              acc += static_cast<C>(gq[a * ow + b]);
            }
          }
          oq[y * iw + x] = static_cast<scalar_t>(acc);
        }
      }
    });
  });
  return in_format(out, suggest_memory_format(grad_output), kOp, copy_into);
}

void register_movement_kernels(Dispatcher& d) {
  Library lib("aten", d);
  constexpr DispatchKey kCpu = DispatchKey::kCPU, kMetaKey = DispatchKey::kMeta;
  lib.impl("constant_pad_nd", kCpu, &constant_pad_nd_cpu)
      .impl("constant_pad_nd", kMetaKey, &constant_pad_nd_meta)
      .impl("upsample_nearest2d", kCpu, &upsample_nearest2d_cpu)
      .impl("upsample_nearest2d", kMetaKey, &upsample_nearest2d_meta)
      .impl("upsample_nearest2d_backward", kCpu, &upsample_nearest2d_backward_cpu)
      .impl("upsample_nearest2d_backward", kMetaKey, &upsample_nearest2d_backward_meta)
      .impl("native_group_norm", kCpu, &native_group_norm_cpu)
      .impl("native_group_norm", kMetaKey, &native_group_norm_meta)
      .impl("native_group_norm_backward", kCpu, &native_group_norm_backward_cpu)
      .impl("native_group_norm_backward", kMetaKey, &native_group_norm_backward_meta)
      .impl("flip", kCpu, &flip_cpu)
      .impl("flip", kMetaKey, &flip_meta)
      .impl("roll", kCpu, &roll_cpu)
      .impl("roll", kMetaKey, &roll_meta)
      .impl("repeat", kCpu, &repeat_cpu)
      .impl("repeat", kMetaKey, &repeat_meta);
}

}  // namespace opspec::internal
