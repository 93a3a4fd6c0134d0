// scatter.cc: CPU kernels of gather, scatter (src, value, add, reduce, and
// their in-place forms), masked_fill.Tensor, masked_select, select_scatter,
// slice_scatter, diagonal_backward, index.Tensor, index_put and nonzero, and
// the registration of these and their Meta kernels (kernels/common/scatter_meta.h).
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/common/backward_meta.h"
#include "kernels/common/opmath.h"
#include "kernels/common/scalar_as.h"
#include "kernels/common/scatter_meta.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/parallel_rows.h"
#include "runtime/ops/op_table.h"

namespace opspec::internal {

namespace {

using loops_detail::load;
using loops_detail::store;


// check_line_indices: every index of the plan's lines lies in [0, bound)
// (PyTorch's scatter/gather kernels refuse negative indices too).
void check_line_indices(const ScatterPlan& p, const int64_t* idx, std::string_view op) {
  for (int64_t l = 0; l < p.lines; ++l) {
    for (int64_t j = 0; j < p.len; ++j) {
      const int64_t v = idx[p.index_off[static_cast<size_t>(l)] + j * p.index_step];
      if (v < 0 || v >= p.bound) index_out_of_bounds(op, v, p.dim, p.bound);
    }
  }
}

// int64_index: index itself when int64, else a contiguous int64 copy (int32
// indices, which PyTorch 2.x's gather and scatters take, are read as int64).
Tensor int64_index(const Tensor& index) {
  return index.dtype() == DType::kInt64 ? index : contiguous_cpu(index, DType::kInt64);
}

// combine: a scatter's update of target value a with b (See Note [Scatter lines]).
template <class C>
C combine(ScatterReduce r, C a, C b) {
  switch (r) {
    case ScatterReduce::kAssign: return b;
    case ScatterReduce::kSum:
    case ScatterReduce::kMean: return a + b;
    case ScatterReduce::kProd: return a * b;
    case ScatterReduce::kMax:
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(b)) return b;
      }
      return a < b ? b : a;
    case ScatterReduce::kMin:
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(b)) return b;
      }
      return b < a ? b : a;
  }
  return b;
}

// identity: the value include_self=false puts first where a reduction scatters.
template <class C>
C identity(ScatterReduce r) {
  switch (r) {
    case ScatterReduce::kProd: return C(1);
    case ScatterReduce::kMax:
      return std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity()
                                                  : std::numeric_limits<C>::lowest();
    case ScatterReduce::kMin:
      return std::numeric_limits<C>::has_infinity ? std::numeric_limits<C>::infinity() : std::numeric_limits<C>::max();
    default: return C(0);
  }
}

// mean_of: a sum over n values: divided, or floor-divided for integers (PyTorch's div_(count, "floor")).
template <class C>
C mean_of(C a, int64_t n) {
  if constexpr (std::is_floating_point_v<C>) {
    return a / static_cast<C>(n);
  } else {
    const C q = a / static_cast<C>(n);
    return a % static_cast<C>(n) != 0 && a < 0 ? q - 1 : q;
  }
}

// scatter_into: the scatter of src (or value when src is undefined) into the
// contiguous target out, along the plan's lines; mean divides by the counts.
void scatter_into(const Tensor& out, const Tensor& index_in, const Tensor& src, const Scalar& value, int64_t dim,
                  ScatterReduce r, bool include_self, std::string_view op) {
  if (index_in.numel() == 0) return;
  const Tensor index = int64_index(index_in);
  const ScatterPlan p = make_scatter_plan(index, dim, out, src);
  const auto* idx = index.data_ptr<int64_t>();
  check_line_indices(p, idx, op);
  const bool parallel = index.numel() >= kParallelGrain;
  OPSPEC_DISPATCH_ALL_DTYPES(out.dtype(), op, [&] {
    using C = arith_t<scalar_t>;
    auto* o = out.data_ptr<scalar_t>();
    const scalar_t* s = src.defined() ? static_cast<const scalar_t*>(src.raw_data()) : nullptr;
    const C v = src.defined() ? C(0) : static_cast<C>(load(checked_scalar_cast<scalar_t>(value, op)));
    auto at = [&](int64_t l, int64_t j) {
      return p.indexed_off[static_cast<size_t>(l)] + idx[p.index_off[static_cast<size_t>(l)] + j * p.index_step] *
                                                         p.indexed_step;
    };
    if (!include_self) {
      parallel_rows(p.lines, parallel, [&](int64_t l) {
        for (int64_t j = 0; j < p.len; ++j) store(o + at(l, j), identity<C>(r));
      });
    }
    std::vector<int64_t> count;
    if (r == ScatterReduce::kMean) count.assign(static_cast<size_t>(out.numel()), include_self ? 1 : 0);
    parallel_rows(p.lines, parallel && r != ScatterReduce::kMean, [&](int64_t l) {
      for (int64_t j = 0; j < p.len; ++j) {
        const int64_t t = at(l, j);
        const C b = s != nullptr ? static_cast<C>(load(s[p.aligned_off[static_cast<size_t>(l)] + j * p.aligned_step]))
                                 : v;
        store(o + t, combine<C>(r, static_cast<C>(load(o[t])), b));
        if (r == ScatterReduce::kMean) ++count[static_cast<size_t>(t)];
      }
    });
    if (r != ScatterReduce::kMean) return;
    for (int64_t t = 0; t < out.numel(); ++t) {
      const int64_t n = std::max<int64_t>(count[static_cast<size_t>(t)], 1);
      store(o + t, mean_of<C>(static_cast<C>(load(o[t])), n));
    }
  });
}

// clone_contiguous: a contiguous cpu copy of t.
Tensor clone_contiguous(const Tensor& t) {
  Tensor out = make_tensor(t.sizes(), t.dtype(), kCPU);
  copy_into(out, t);
  return out;
}

// scatter_in_place: runs scatter_into on self, through a contiguous copy when self is strided.
Tensor scatter_in_place(const Tensor& self, const Tensor& index, const Tensor& src, const Scalar& value, int64_t dim,
                        ScatterReduce r, bool include_self, std::string_view op) {
  require_cpu_device(self.device(), op);
  const Tensor src_c = src.defined() ? src : Tensor();
  if (self.is_contiguous()) {
    scatter_into(self, index, src_c, value, dim, r, include_self, op);
  } else {
    Tensor tmp = clone_contiguous(self);
    scatter_into(tmp, index, src_c, value, dim, r, include_self, op);
    copy_into(self, tmp);
  }
  self.impl()->bump_version();
  return self;
}

Tensor gather_cpu(const Tensor& self, int64_t dim, const Tensor& index_in, bool) {
  constexpr std::string_view kOp = "aten::gather";
  require_cpu_device(self.device(), kOp);
  const int64_t d = check_gather(self, dim, index_in);
  Tensor out = make_tensor(index_in.sizes(), self.dtype(), kCPU);
  if (index_in.numel() == 0) return out;
  const Tensor index = int64_index(index_in);
  const ScatterPlan p = make_scatter_plan(index, d, self, out);
  const auto* idx = index.data_ptr<int64_t>();
  check_line_indices(p, idx, kOp);
  const auto elem = static_cast<size_t>(element_size(self.dtype()));
  const auto* s = static_cast<const char*>(self.raw_data());
  auto* o = static_cast<char*>(out.raw_data());
  parallel_rows(p.lines, index.numel() >= kParallelGrain, [&](int64_t l) {
    const auto li = static_cast<size_t>(l);
    for (int64_t j = 0; j < p.len; ++j) {
      const int64_t k = idx[p.index_off[li] + j * p.index_step];
      std::memcpy(o + (p.aligned_off[li] + j * p.aligned_step) * static_cast<int64_t>(elem),
                  s + (p.indexed_off[li] + k * p.indexed_step) * static_cast<int64_t>(elem), elem);
    }
  });
  return out;
}

Tensor scatter_src_cpu(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  const int64_t d = check_scatter(self, dim, index, &src, "scatter");
  Tensor out = clone_contiguous(self);
  scatter_into(out, index, src, Scalar(), d, ScatterReduce::kAssign, true, "aten::scatter");
  return out;
}
Tensor scatter_value_cpu(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  const int64_t d = check_scatter(self, dim, index, nullptr, "scatter");
  Tensor out = clone_contiguous(self);
  scatter_into(out, index, Tensor(), value, d, ScatterReduce::kAssign, true, "aten::scatter");
  return out;
}
Tensor scatter_add_cpu(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  const int64_t d = check_scatter(self, dim, index, &src, "scatter_add");
  Tensor out = clone_contiguous(self);
  scatter_into(out, index, src, Scalar(), d, ScatterReduce::kSum, true, "aten::scatter_add");
  return out;
}
Tensor scatter_reduce_cpu(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                          std::string_view reduce, bool include_self) {
  const ScatterReduce r = parse_scatter_reduce(reduce, "aten::scatter_reduce");
  const int64_t d = check_scatter(self, dim, index, &src, "scatter_reduce");
  Tensor out = clone_contiguous(self);
  scatter_into(out, index, src, Scalar(), d, r, include_self, "aten::scatter_reduce");
  return out;
}
Tensor scatter__src_cpu(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  const int64_t d = check_scatter(self, dim, index, &src, "scatter");
  check_scatter_overlap(self, index, &src, "aten::scatter_");
  return scatter_in_place(self, index, src, Scalar(), d, ScatterReduce::kAssign, true, "aten::scatter_");
}
Tensor scatter__value_cpu(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  const int64_t d = check_scatter(self, dim, index, nullptr, "scatter");
  check_scatter_overlap(self, index, nullptr, "aten::scatter_");
  return scatter_in_place(self, index, Tensor(), value, d, ScatterReduce::kAssign, true, "aten::scatter_");
}
Tensor scatter_add__cpu(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  const int64_t d = check_scatter(self, dim, index, &src, "scatter_add");
  check_scatter_overlap(self, index, &src, "aten::scatter_add_");
  return scatter_in_place(self, index, src, Scalar(), d, ScatterReduce::kSum, true, "aten::scatter_add_");
}
Tensor scatter_reduce__cpu(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                           std::string_view reduce, bool include_self) {
  const ScatterReduce r = parse_scatter_reduce(reduce, "aten::scatter_reduce_");
  const int64_t d = check_scatter(self, dim, index, &src, "scatter_reduce");
  check_scatter_overlap(self, index, &src, "aten::scatter_reduce_");
  return scatter_in_place(self, index, src, Scalar(), d, r, include_self, "aten::scatter_reduce_");
}

// scalar_of: the value of a one-element cpu tensor (Tensor.item()).
Scalar scalar_of(const Tensor& t) {
  return OPSPEC_DISPATCH_ALL_DTYPES(t.dtype(), "item", [&]() -> Scalar {
    const auto v = load(*static_cast<const scalar_t*>(t.raw_data()));
    if constexpr (std::is_same_v<scalar_t, bool>) {
      return Scalar(static_cast<bool>(v));
    } else if constexpr (std::is_integral_v<scalar_t>) {
      return Scalar(static_cast<int64_t>(v));
    } else {
      return Scalar(static_cast<double>(v));
    }
  });
}

// masked_fill_.Tensor: masked_fill_.Scalar's CPU kernel with value.item(), as PyTorch's masked_fill__cpu.
Tensor masked_fill__tensor_cpu(const Tensor& self, const Tensor& mask, const Tensor& value) {
  constexpr std::string_view kOp = "aten::masked_fill_";
  require_cpu_device(self.device(), kOp);
  check_masked_fill_value(self, value, kOp);
  return Dispatcher::singleton().redispatch<Tensor, const Tensor&, const Tensor&, const Scalar&>(
      builtin_op(OpId::masked_fill__Scalar), DispatchKeySet(DispatchKey::kCPU), self, mask, scalar_of(value));
}
// masked_fill.Tensor: self broadcast with mask, copied contiguous, then filled.
Tensor masked_fill_tensor_cpu(const Tensor& self, const Tensor& mask, const Tensor& value) {
  constexpr std::string_view kOp = "aten::masked_fill";
  require_cpu_device(self.device(), kOp);
  check_masked_fill_value(self, value, kOp);
  Tensor out = make_tensor(masked_fill_sizes(self, mask), self.dtype(), kCPU);
  copy_into(out, self);
  return masked_fill__tensor_cpu(out, mask, value);
}

Tensor masked_select_cpu(const Tensor& self, const Tensor& mask) {
  constexpr std::string_view kOp = "aten::masked_select";
  require_cpu_device(self.device(), kOp);
  const SizeVec shape = masked_select_shape(self, mask);
  const Tensor s = contiguous_cpu(broadcast_view(self, shape));
  const Tensor m = contiguous_cpu(broadcast_view(mask, shape));
  const auto* mp = m.data_ptr<bool>();
  const int64_t n = m.numel();
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) kept += mp[i] ? 1 : 0;
  const int64_t out_sizes[] = {kept};
  Tensor out = make_tensor(out_sizes, self.dtype(), kCPU);
  const auto elem = static_cast<size_t>(element_size(self.dtype()));
  const auto* sp = static_cast<const char*>(s.raw_data());
  auto* op = static_cast<char*>(out.raw_data());
  for (int64_t i = 0; i < n; ++i) {
    if (!mp[i]) continue;
    std::memcpy(op, sp + i * static_cast<int64_t>(elem), elem);
    op += elem;
  }
  return out;
}

Tensor select_scatter_cpu(const Tensor& self, const Tensor& src, int64_t dim, int64_t index) {
  require_cpu_device(self.device(), "aten::select_scatter");
  Tensor out = clone_contiguous(self);
  copy_into(select_scatter_target(out, src, dim, index), src);
  return out;
}
Tensor slice_scatter_cpu(const Tensor& self, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                         std::optional<int64_t> end, int64_t step) {
  require_cpu_device(self.device(), "aten::slice_scatter");
  Tensor out = clone_contiguous(self);
  copy_into(slice_scatter_target(out, src, dim, start, end, step), src);
  return out;
}
Tensor diagonal_backward_cpu(const Tensor& grad, IntArrayRef input_sizes, int64_t offset, int64_t dim1,
                             int64_t dim2) {
  require_cpu_device(grad.device(), "aten::diagonal_backward");
  Tensor out = make_tensor(input_sizes, grad.dtype(), kCPU);
  zero_bytes(out);
  copy_into(diagonal_backward_target(out, grad, offset, dim1, dim2), grad);
  return out;
}

Tensor nonzero_cpu(const Tensor& self) {
  constexpr std::string_view kOp = "aten::nonzero";
  require_cpu_device(self.device(), kOp);
  const Tensor s = contiguous_cpu(self);
  const int64_t n = s.numel(), nd = self.dim();
  std::vector<int64_t> hits;
  OPSPEC_DISPATCH_ALL_DTYPES(self.dtype(), kOp, [&] {
    const auto* p = static_cast<const scalar_t*>(s.raw_data());
    for (int64_t i = 0; i < n; ++i) {
      if (static_cast<bool>(load(p[i]))) hits.push_back(i);
    }
  });
  const int64_t out_sizes[] = {static_cast<int64_t>(hits.size()), nd};
  Tensor out = make_tensor(out_sizes, DType::kInt64, kCPU);
  auto* o = out.data_ptr<int64_t>();
  for (size_t h = 0; h < hits.size(); ++h) {
    int64_t rest = hits[h];
    for (int64_t d = nd - 1; d >= 0; --d) {
      o[static_cast<int64_t>(h) * nd + d] = rest % self.size(d);
      rest /= self.size(d);
    }
  }
  return out;
}

Tensor contiguous_long_cpu(const Tensor& t) { return contiguous_cpu(t, DType::kInt64); }

IndexPlan plan_cpu(const Tensor& self, OptionalTensorList indices, std::string_view op) {
  require_cpu_device(self.device(), op);
  const std::vector<Tensor> expanded = expand_index_masks(self, indices, op, &nonzero_cpu);
  for (const Tensor& t : expanded) {
    if (t.defined()) {
      const Tensor both[] = {self, t};
      check_same_device(both, op);
    }
  }
  return make_index_plan(self, expanded, op, &contiguous_long_cpu);
}

Tensor index_cpu(const Tensor& self, OptionalTensorList indices) {
  constexpr std::string_view kOp = "aten::index.Tensor";
  const IndexPlan p = plan_cpu(self, indices, kOp);
  Tensor out = make_tensor(p.result_sizes, self.dtype(), kCPU);
  const std::vector<int64_t> adv = index_plan_offsets(p, kOp);
  if (out.numel() == 0) return out;
  const auto elem = element_size(self.dtype());
  const auto* s = static_cast<const char*>(self.raw_data());
  auto* o = static_cast<char*>(out.raw_data());
  const auto post = static_cast<int64_t>(p.post_off.size());
  parallel_rows(static_cast<int64_t>(p.pre_off.size()) * p.adv, out.numel() >= kParallelGrain, [&](int64_t r) {
    const int64_t pi = r / p.adv, b = r % p.adv;
    const int64_t base = p.pre_off[static_cast<size_t>(pi)] + adv[static_cast<size_t>(b)];
    for (int64_t q = 0; q < post; ++q) {
      std::memcpy(o + (r * post + q) * elem, s + (base + p.post_off[static_cast<size_t>(q)]) * elem,
                  static_cast<size_t>(elem));
    }
  });
  return out;
}

// index_put_into: self[indices] = values (+= when accumulate), in index order.
Tensor index_put_into(const Tensor& self, OptionalTensorList indices, const Tensor& values, bool accumulate,
                      std::string_view op) {
  const IndexPlan p = plan_cpu(self, indices, op);
  check_index_put(self, values, p.result_sizes, op);
  const std::vector<int64_t> adv = index_plan_offsets(p, op);
  const Tensor v = contiguous_cpu(broadcast_view(values, p.result_sizes));
  const auto pre = static_cast<int64_t>(p.pre_off.size()), post = static_cast<int64_t>(p.post_off.size());
  if (compute_numel(p.result_sizes) > 0) {
    OPSPEC_DISPATCH_ALL_DTYPES(self.dtype(), op, [&] {
      using C = arith_t<scalar_t>;
      auto* s = static_cast<scalar_t*>(self.raw_data());
      const auto* vp = static_cast<const scalar_t*>(v.raw_data());
      // One worker per (p, q) steps through b in order (See Note [Scatter lines]).
      parallel_rows(pre * post, v.numel() >= kParallelGrain, [&](int64_t r) {
        const int64_t pi = r / post, q = r % post;
        const int64_t base = p.pre_off[static_cast<size_t>(pi)] + p.post_off[static_cast<size_t>(q)];
        for (int64_t b = 0; b < p.adv; ++b) {
          scalar_t* t = s + base + adv[static_cast<size_t>(b)];
          const scalar_t x = vp[(pi * p.adv + b) * post + q];
          if (accumulate) {
            store(t, static_cast<C>(static_cast<C>(load(*t)) + static_cast<C>(load(x))));
          } else {
            *t = x;
          }
        }
      });
    });
  }
  self.impl()->bump_version();
  return self;
}

Tensor index_put__cpu(const Tensor& self, OptionalTensorList indices, const Tensor& values, bool accumulate) {
  check_index_put_overlap(self, indices, values, accumulate, "aten::index_put_");
  return index_put_into(self, indices, values, accumulate, "aten::index_put_");
}
Tensor index_put_impl__cpu(const Tensor& self, OptionalTensorList indices, const Tensor& values, bool accumulate,
                           bool) {
  check_index_put_overlap(self, indices, values, accumulate, "aten::_index_put_impl_");
  return index_put_into(self, indices, values, accumulate, "aten::_index_put_impl_");
}
Tensor index_put_cpu(const Tensor& self, OptionalTensorList indices, const Tensor& values, bool accumulate) {
  require_cpu_device(self.device(), "aten::index_put");
  Tensor out = clone_contiguous(self);
  return index_put_into(out, indices, values, accumulate, "aten::index_put");
}

}  // namespace

void register_scatter_kernels(Dispatcher& d) {
  Library lib("aten", d);
  register_scatter_meta_kernels(lib);
  constexpr DispatchKey kKey = DispatchKey::kCPU;
  lib.impl("gather", kKey, &gather_cpu)
      .impl("scatter.src", kKey, &scatter_src_cpu)
      .impl("scatter.value", kKey, &scatter_value_cpu)
      .impl("scatter_add", kKey, &scatter_add_cpu)
      .impl("scatter_reduce.two", kKey, &scatter_reduce_cpu)
      .impl("scatter_.src", kKey, &scatter__src_cpu)
      .impl("scatter_.value", kKey, &scatter__value_cpu)
      .impl("scatter_add_", kKey, &scatter_add__cpu)
      .impl("scatter_reduce_.two", kKey, &scatter_reduce__cpu)
      .impl("masked_fill.Tensor", kKey, &masked_fill_tensor_cpu)
      .impl("masked_fill_.Tensor", kKey, &masked_fill__tensor_cpu)
      .impl("masked_select", kKey, &masked_select_cpu)
      .impl("select_scatter", kKey, &select_scatter_cpu)
      .impl("slice_scatter", kKey, &slice_scatter_cpu)
      .impl("diagonal", kKey, &diagonal_kernel)
      .impl("diagonal_backward", kKey, &diagonal_backward_cpu)
      .impl("index.Tensor", kKey, &index_cpu)
      .impl("index_put_", kKey, &index_put__cpu)
      .impl("index_put", kKey, &index_put_cpu)
      .impl("_index_put_impl_", kKey, &index_put_impl__cpu)
      .impl("nonzero", kKey, &nonzero_cpu);
}

}  // namespace opspec::internal
