// scatter.cc: CUDA kernels of the scatter, gather and indexing ops
// (kernels/cpu/scatter.cc): the shared checks and plans of
// kernels/common/scatter_meta.h, then the launchers of scatter.cu.
#include <cuda_runtime_api.h>

#include <cstring>
#include <optional>
#include <vector>

#include "kernels/common/backward_meta.h"
#include "kernels/common/scalar_as.h"
#include "kernels/common/scatter_meta.h"
#include "kernels/cuda/cuda_copy.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/scatter_launch.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/op_table.h"

namespace opspec::internal::cuda {
namespace {

// Note [Host-side index plans on CUDA]
// The CPU kernels name the first bad index in PyTorch's words, and their
// plans are host arrays (See Note [Scatter lines]). The CUDA kernels copy
// the indices to the host (one synchronizing copy, which the index checks
// of nn.cc pay too, See Note [Index checks on CUDA]), check them and build
// the same per-element offsets there, and upload those; the data moves and
// the arithmetic run on the device, line by line in the CPU's order, so the
// results have the CPU's bits. The data-dependent ops (nonzero,
// masked_select, bool masks of index) read their mask on the host the same way.

// to_host: t as a contiguous cpu tensor of dtype.
Tensor to_host(const Tensor& t, DType dtype) {
  Tensor host = make_tensor(t.sizes(), dtype, kCPU);
  copy_between(host, t);
  return host;
}

// upload: v as an int64 tensor on dev.
Tensor upload(const std::vector<int64_t>& v, Device dev) {
  const int64_t n[] = {static_cast<int64_t>(v.size())};
  Tensor host = make_tensor(n, DType::kInt64, kCPU);
  if (!v.empty()) std::memcpy(host.raw_data(), v.data(), v.size() * sizeof(int64_t));
  Tensor out = empty_cuda(n, DType::kInt64, dev);
  copy_between(out, host);
  return out;
}

// clone_cuda: a contiguous copy of t on dev.
Tensor clone_cuda(const Tensor& t, Device dev) {
  Tensor out = empty_cuda(t.sizes(), t.dtype(), dev);
  device_copy(out, t);
  return out;
}

// value_bits: value converted (checked) to dtype, as storage bits.
uint64_t value_bits(const Scalar& value, DType dtype, std::string_view op) {
  uint64_t bits = 0;
  OPSPEC_DISPATCH_ALL_DTYPES(dtype, op, [&] {
    const scalar_t v = checked_scalar_cast<scalar_t>(value, op);
    std::memcpy(&bits, &v, sizeof(v));
  });
  return bits;
}

// scatter_into: kernels/cpu/scatter.cc's scatter_into on a contiguous cuda target.
void scatter_into(const Tensor& out, const Tensor& index, const Tensor& src, const Scalar& value, int64_t dim,
                  ScatterReduce r, bool include_self, std::string_view op, Device dev) {
  if (index.numel() == 0) return;
  const Tensor idx = to_host(index, DType::kInt64);
  const Tensor src_c = src.defined() ? on_device(src, src.dtype(), dev) : Tensor();
  const ScatterPlan p = make_scatter_plan(idx, dim, out, src_c);
  const auto* ip = static_cast<const int64_t*>(idx.raw_data());
  std::vector<int64_t> tgt(static_cast<size_t>(p.lines * p.len)), from(src.defined() ? tgt.size() : 0);
  for (int64_t l = 0; l < p.lines; ++l) {
    const auto li = static_cast<size_t>(l);
    for (int64_t j = 0; j < p.len; ++j) {
      const int64_t v = ip[p.index_off[li] + j * p.index_step];
      if (v < 0 || v >= p.bound) index_out_of_bounds(op, v, p.dim, p.bound);
      tgt[static_cast<size_t>(l * p.len + j)] = p.indexed_off[li] + v * p.indexed_step;
      if (src.defined()) from[static_cast<size_t>(l * p.len + j)] = p.aligned_off[li] + j * p.aligned_step;
    }
  }
  const Tensor tgt_d = upload(tgt, dev);
  const Tensor from_d = upload(from, dev);
  DeviceGuard guard(dev);
  Tensor count;
  if (r == ScatterReduce::kMean) {
    count = empty_cuda(out.sizes(), DType::kInt64, dev);
    check(cudaMemsetAsync(count.raw_data(), 0, static_cast<size_t>(count.numel()) * sizeof(int64_t), nullptr),
          "scatter_reduce");
  }
  launch_scatter_lines(code_of(out.dtype()), static_cast<int>(r), include_self, out.raw_data(),
                       src.defined() ? src_c.raw_data() : nullptr, value_bits(value, out.dtype(), op),
                       static_cast<const int64_t*>(tgt_d.raw_data()), static_cast<const int64_t*>(from_d.raw_data()),
                       p.lines, p.len, count.defined() ? static_cast<int64_t*>(count.raw_data()) : nullptr);
  if (r == ScatterReduce::kMean) {
    launch_mean_finalize(code_of(out.dtype()), out.raw_data(), static_cast<const int64_t*>(count.raw_data()),
                         include_self, out.numel());
  }
}

Tensor scatter_out_of_place(const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src,
                            const Scalar& value, ScatterReduce r, bool include_self, std::string_view name) {
  const int64_t d = check_scatter(self, dim, index, src, name);
  const Device dev = src != nullptr ? op_device({self, index, *src}, name) : op_device({self, index}, name);
  Tensor out = clone_cuda(self, dev);
  scatter_into(out, index, src != nullptr ? *src : Tensor(), value, d, r, include_self, str_cat("aten::", name), dev);
  return out;
}

Tensor scatter_in_place(const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src, const Scalar& value,
                        ScatterReduce r, bool include_self, std::string_view name, std::string_view op) {
  const int64_t d = check_scatter(self, dim, index, src, name);
  check_scatter_overlap(self, index, src, op);
  const Device dev = src != nullptr ? op_device({self, index, *src}, op) : op_device({self, index}, op);
  const Tensor s = src != nullptr ? *src : Tensor();
  if (self.is_contiguous()) {
    scatter_into(self, index, s, value, d, r, include_self, op, dev);
  } else {
    Tensor tmp = clone_cuda(self, dev);
    scatter_into(tmp, index, s, value, d, r, include_self, op, dev);
    device_copy(self, tmp);
  }
  self.impl()->bump_version();
  return self;
}

Tensor gather_cuda(const Tensor& self, int64_t dim, const Tensor& index, bool) {
  constexpr std::string_view kOp = "aten::gather";
  const int64_t d = check_gather(self, dim, index);
  const Device dev = op_device({self, index}, kOp);
  Tensor out = empty_cuda(index.sizes(), self.dtype(), dev);
  if (index.numel() == 0) return out;
  const Tensor idx = to_host(index, DType::kInt64);
  const ScatterPlan p = make_scatter_plan(idx, d, self, out);
  const auto* ip = static_cast<const int64_t*>(idx.raw_data());
  std::vector<int64_t> off(static_cast<size_t>(out.numel()));
  for (int64_t l = 0; l < p.lines; ++l) {
    const auto li = static_cast<size_t>(l);
    for (int64_t j = 0; j < p.len; ++j) {
      const int64_t v = ip[p.index_off[li] + j * p.index_step];
      if (v < 0 || v >= p.bound) index_out_of_bounds(kOp, v, p.dim, p.bound);
      off[static_cast<size_t>(p.aligned_off[li] + j * p.aligned_step)] = p.indexed_off[li] + v * p.indexed_step;
    }
  }
  const Tensor off_d = upload(off, dev);
  DeviceGuard guard(dev);
  launch_gather_offsets(static_cast<int>(self.element_size()), self.raw_data(),
                        static_cast<const int64_t*>(off_d.raw_data()), out.raw_data(), out.numel());
  return out;
}

Tensor scatter_src_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_out_of_place(self, dim, index, &src, Scalar(), ScatterReduce::kAssign, true, "scatter");
}
Tensor scatter_value_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  return scatter_out_of_place(self, dim, index, nullptr, value, ScatterReduce::kAssign, true, "scatter");
}
Tensor scatter_add_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_out_of_place(self, dim, index, &src, Scalar(), ScatterReduce::kSum, true, "scatter_add");
}
Tensor scatter_reduce_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                           std::string_view reduce, bool include_self) {
  const ScatterReduce r = parse_scatter_reduce(reduce, "aten::scatter_reduce");
  return scatter_out_of_place(self, dim, index, &src, Scalar(), r, include_self, "scatter_reduce");
}
Tensor scatter__src_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_in_place(self, dim, index, &src, Scalar(), ScatterReduce::kAssign, true, "scatter", "aten::scatter_");
}
Tensor scatter__value_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  return scatter_in_place(self, dim, index, nullptr, value, ScatterReduce::kAssign, true, "scatter",
                          "aten::scatter_");
}
Tensor scatter_add__cuda(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_in_place(self, dim, index, &src, Scalar(), ScatterReduce::kSum, true, "scatter_add",
                          "aten::scatter_add_");
}
Tensor scatter_reduce__cuda(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                            std::string_view reduce, bool include_self) {
  const ScatterReduce r = parse_scatter_reduce(reduce, "aten::scatter_reduce_");
  return scatter_in_place(self, dim, index, &src, Scalar(), r, include_self, "scatter_reduce", "aten::scatter_reduce_");
}

// scalar_of: the value of a one-element tensor on any device (Tensor.item()).
Scalar scalar_of(const Tensor& t) {
  const Tensor h = to_host(t, t.dtype());
  return OPSPEC_DISPATCH_ALL_DTYPES(t.dtype(), "item", [&]() -> Scalar {
    const scalar_t v = *static_cast<const scalar_t*>(h.raw_data());
    if constexpr (std::is_same_v<scalar_t, bool>) {
      return Scalar(v);
    } else if constexpr (std::is_integral_v<scalar_t>) {
      return Scalar(static_cast<int64_t>(v));
    } else if constexpr (std::is_same_v<scalar_t, double>) {
      return Scalar(v);  // exact, as the CPU's item()
    } else {
      return Scalar(static_cast<double>(static_cast<float>(v)));
    }
  });
}

Tensor masked_fill__tensor_cuda(const Tensor& self, const Tensor& mask, const Tensor& value) {
  constexpr std::string_view kOp = "aten::masked_fill_";
  check_masked_fill_value(self, value, kOp);
  return Dispatcher::singleton().redispatch<Tensor, const Tensor&, const Tensor&, const Scalar&>(
      builtin_op(OpId::masked_fill__Scalar), DispatchKeySet(DispatchKey::kCUDA), self, mask, scalar_of(value));
}
Tensor masked_fill_tensor_cuda(const Tensor& self, const Tensor& mask, const Tensor& value) {
  constexpr std::string_view kOp = "aten::masked_fill";
  check_masked_fill_value(self, value, kOp);
  const SizeVec sizes = masked_fill_sizes(self, mask);
  Tensor out = empty_cuda(sizes, self.dtype(), op_device({self, mask}, kOp));
  device_copy(out, self);
  return masked_fill__tensor_cuda(out, mask, value);
}

Tensor masked_select_cuda(const Tensor& self, const Tensor& mask) {
  constexpr std::string_view kOp = "aten::masked_select";
  const SizeVec shape = masked_select_shape(self, mask);
  const Device dev = op_device({self, mask}, kOp);
  const Tensor m = to_host(broadcast_view(mask, shape), DType::kBool);
  const Tensor s = broadcast_view(on_device(self, self.dtype(), dev), shape);
  const std::vector<int64_t> all = element_offsets(s.sizes(), s.strides());
  std::vector<int64_t> off;
  const auto* mp = static_cast<const bool*>(m.raw_data());
  for (size_t i = 0; i < all.size() && static_cast<int64_t>(i) < m.numel(); ++i) {
    if (mp[i]) off.push_back(all[i]);
  }
  const int64_t n[] = {static_cast<int64_t>(off.size())};
  Tensor out = empty_cuda(n, self.dtype(), dev);
  if (off.empty()) return out;
  const Tensor off_d = upload(off, dev);
  DeviceGuard guard(dev);
  launch_gather_offsets(static_cast<int>(self.element_size()), s.raw_data(),
                        static_cast<const int64_t*>(off_d.raw_data()), out.raw_data(), n[0]);
  return out;
}

Tensor select_scatter_cuda(const Tensor& self, const Tensor& src, int64_t dim, int64_t index) {
  Tensor out = clone_cuda(self, op_device({self, src}, "aten::select_scatter"));
  device_copy(select_scatter_target(out, src, dim, index), src);
  return out;
}
Tensor slice_scatter_cuda(const Tensor& self, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                          std::optional<int64_t> end, int64_t step) {
  Tensor out = clone_cuda(self, op_device({self, src}, "aten::slice_scatter"));
  device_copy(slice_scatter_target(out, src, dim, start, end, step), src);
  return out;
}
Tensor diagonal_backward_cuda(const Tensor& grad, IntArrayRef input_sizes, int64_t offset, int64_t dim1,
                              int64_t dim2) {
  const Device dev = op_device({grad}, "aten::diagonal_backward");
  Tensor out = empty_cuda(input_sizes, grad.dtype(), dev);
  if (out.numel() > 0) {
    DeviceGuard guard(dev);
    check(cudaMemsetAsync(out.raw_data(), 0, static_cast<size_t>(out.numel()) * out.element_size(), nullptr),
          "diagonal_backward");
  }
  device_copy(diagonal_backward_target(out, grad, offset, dim1, dim2), grad);
  return out;
}

Tensor nonzero_cuda(const Tensor& self) {
  constexpr std::string_view kOp = "aten::nonzero";
  const Device dev = op_device({self}, kOp);
  const Tensor nz = to_host(self, DType::kBool);
  const auto* p = static_cast<const bool*>(nz.raw_data());
  const int64_t nd = self.dim();
  std::vector<int64_t> coords;
  for (int64_t i = 0; i < nz.numel(); ++i) {
    if (!p[i]) continue;
    const size_t at = coords.size();
    coords.resize(at + static_cast<size_t>(nd));
    int64_t rest = i;
    for (int64_t d = nd - 1; d >= 0; --d) {
      coords[at + static_cast<size_t>(d)] = rest % self.size(d);
      rest /= self.size(d);
    }
  }
  const int64_t hits = nd == 0 ? (nz.numel() == 1 && p[0] ? 1 : 0) : static_cast<int64_t>(coords.size()) / nd;
  const int64_t sizes[] = {hits, nd};
  Tensor out = empty_cuda(sizes, DType::kInt64, dev);
  if (!coords.empty()) {
    Tensor host = make_tensor(sizes, DType::kInt64, kCPU);
    std::memcpy(host.raw_data(), coords.data(), coords.size() * sizeof(int64_t));
    copy_between(out, host);
  }
  return out;
}

Tensor host_long(const Tensor& t) { return to_host(t, DType::kInt64); }

IndexPlan plan_cuda(const Tensor& self, OptionalTensorList indices, std::string_view op) {
  const std::vector<Tensor> expanded = expand_index_masks(self, indices, op, &nonzero_cuda);
  std::vector<Tensor> all{self};
  for (const Tensor& t : expanded) {
    if (t.defined()) all.push_back(t);
  }
  op_device(all, op);
  return make_index_plan(self, expanded, op, &host_long);
}

Tensor index_cuda(const Tensor& self, OptionalTensorList indices) {
  constexpr std::string_view kOp = "aten::index.Tensor";
  const IndexPlan p = plan_cuda(self, indices, kOp);
  const Device dev = self.device();
  Tensor out = empty_cuda(p.result_sizes, self.dtype(), dev);
  const std::vector<int64_t> adv = index_plan_offsets(p, kOp);
  if (out.numel() == 0) return out;
  std::vector<int64_t> off;
  off.reserve(static_cast<size_t>(out.numel()));
  for (const int64_t pre : p.pre_off) {
    for (const int64_t a : adv) {
      for (const int64_t post : p.post_off) off.push_back(pre + a + post);
    }
  }
  const Tensor off_d = upload(off, dev);
  DeviceGuard guard(dev);
  launch_gather_offsets(static_cast<int>(self.element_size()), self.raw_data(),
                        static_cast<const int64_t*>(off_d.raw_data()), out.raw_data(), out.numel());
  return out;
}

// index_put_into: kernels/cpu/scatter.cc's index_put_into: one line per (p, q) walking b in order.
Tensor index_put_into(const Tensor& self, OptionalTensorList indices, const Tensor& values, bool accumulate,
                      std::string_view op) {
  const IndexPlan p = plan_cuda(self, indices, op);
  check_index_put(self, values, p.result_sizes, op);
  const std::vector<int64_t> adv = index_plan_offsets(p, op);
  const Device dev = self.device();
  const int64_t pre = static_cast<int64_t>(p.pre_off.size()), post = static_cast<int64_t>(p.post_off.size());
  if (compute_numel(p.result_sizes) > 0) {
    const Tensor v = contiguous_cuda(broadcast_view(on_device(values, values.dtype(), dev), p.result_sizes));
    std::vector<int64_t> tgt, from;
    tgt.reserve(static_cast<size_t>(pre * post * p.adv));
    from.reserve(tgt.capacity());
    for (int64_t pi = 0; pi < pre; ++pi) {
      for (int64_t q = 0; q < post; ++q) {
        for (int64_t b = 0; b < p.adv; ++b) {
          tgt.push_back(p.pre_off[static_cast<size_t>(pi)] + p.post_off[static_cast<size_t>(q)] +
                        adv[static_cast<size_t>(b)]);
          from.push_back((pi * p.adv + b) * post + q);
        }
      }
    }
    const Tensor tgt_d = upload(tgt, dev), from_d = upload(from, dev);
    DeviceGuard guard(dev);
    const ScatterReduce r = accumulate ? ScatterReduce::kSum : ScatterReduce::kAssign;
    launch_scatter_lines(code_of(self.dtype()), static_cast<int>(r), true, self.raw_data(), v.raw_data(), 0,
                         static_cast<const int64_t*>(tgt_d.raw_data()), static_cast<const int64_t*>(from_d.raw_data()),
                         pre * post, p.adv, nullptr);
  }
  self.impl()->bump_version();
  return self;
}

Tensor index_put__cuda(const Tensor& self, OptionalTensorList indices, const Tensor& values, bool accumulate) {
  check_index_put_overlap(self, indices, values, accumulate, "aten::index_put_");
  return index_put_into(self, indices, values, accumulate, "aten::index_put_");
}
Tensor index_put_impl__cuda(const Tensor& self, OptionalTensorList indices, const Tensor& values, bool accumulate,
                            bool) {
  check_index_put_overlap(self, indices, values, accumulate, "aten::_index_put_impl_");
  return index_put_into(self, indices, values, accumulate, "aten::_index_put_impl_");
}
Tensor index_put_cuda(const Tensor& self, OptionalTensorList indices, const Tensor& values, bool accumulate) {
  Tensor out = clone_cuda(self, op_device({self}, "aten::index_put"));
  return index_put_into(out, indices, values, accumulate, "aten::index_put");
}

}  // namespace

void register_scatter_cuda_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kCUDA;
  lib.impl("gather", kKey, &gather_cuda)
      .impl("scatter.src", kKey, &scatter_src_cuda)
      .impl("scatter.value", kKey, &scatter_value_cuda)
      .impl("scatter_add", kKey, &scatter_add_cuda)
      .impl("scatter_reduce.two", kKey, &scatter_reduce_cuda)
      .impl("scatter_.src", kKey, &scatter__src_cuda)
      .impl("scatter_.value", kKey, &scatter__value_cuda)
      .impl("scatter_add_", kKey, &scatter_add__cuda)
      .impl("scatter_reduce_.two", kKey, &scatter_reduce__cuda)
      .impl("masked_fill.Tensor", kKey, &masked_fill_tensor_cuda)
      .impl("masked_fill_.Tensor", kKey, &masked_fill__tensor_cuda)
      .impl("masked_select", kKey, &masked_select_cuda)
      .impl("select_scatter", kKey, &select_scatter_cuda)
      .impl("slice_scatter", kKey, &slice_scatter_cuda)
      .impl("diagonal", kKey, &diagonal_kernel)
      .impl("diagonal_backward", kKey, &diagonal_backward_cuda)
      .impl("index.Tensor", kKey, &index_cuda)
      .impl("index_put_", kKey, &index_put__cuda)
      .impl("index_put", kKey, &index_put_cuda)
      .impl("_index_put_impl_", kKey, &index_put_impl__cuda)
      .impl("nonzero", kKey, &nonzero_cuda);
}

}  // namespace opspec::internal::cuda
