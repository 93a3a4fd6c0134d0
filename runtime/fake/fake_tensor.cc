#include "runtime/fake/fake_tensor.h"

#include <optional>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "runtime/core/error.h"
#include "runtime/core/meta_stand_in.h"
#include "runtime/core/shape_utils.h"

namespace opspec {
namespace {

// meta_view: a meta tensor over t's (meta) storage with t's geometry, which the
// Meta kernel can take; it keeps the wrapped-number flag for type promotion.
Tensor meta_view(const Tensor& t) {
  auto impl = IntrusivePtr<TensorImpl>::make(t.impl()->storage(), t.sizes(), t.strides(), t.storage_offset(),
                                             t.dtype(), kMeta);
  impl->set_wrapped_number(t.is_wrapped_number());
  return Tensor(std::move(impl));
}

// fake_view: the fake tensor on device over a meta result's storage and geometry.
Tensor fake_view(const Tensor& meta, Device device) {
  auto impl = IntrusivePtr<TensorImpl>::make(meta.impl()->storage(), meta.sizes(), meta.strides(),
                                             meta.storage_offset(), meta.dtype(), device);
  impl->set_backend_key(DispatchKey::kFake);
  return Tensor(std::move(impl));
}

// A real 0-dim cpu tensor (a scalar such as the 1.0 of `x + 1.0`) may join any
// device's op in a real run, so it may join a fake one too.
bool is_cpu_scalar(const Tensor& t) { return t.dim() == 0 && t.device().is_cpu(); }

// to_meta_arg: what the Meta kernel gets in place of t.
Tensor to_meta_arg(const Tensor& t, const OperatorHandle& op) {
  if (!t.defined() || t.device().is_meta()) return t;
  if (is_fake(t)) return meta_view(t);
  if (is_cpu_scalar(t)) {
    Tensor m = internal::make_tensor({}, t.dtype(), kMeta);
    m.impl()->set_wrapped_number(t.is_wrapped_number());
    return m;
  }
  OPSPEC_FAIL(op.name(), ": got a real tensor (", t.meta_str(), ") together with fake tensors; run under ",
              "FakeTensorMode, or convert it with FakeTensorMode::from_real");
}

// output_device: the device a real run's result would have. Raises the real
// run's error when tensors on different devices meet.
Device output_device(const OperatorHandle& op, const Stack& stack) {
  const FunctionSchema& schema = op.schema();
  const int device_index = schema.argument_index("device");
  if (device_index >= 0 && !stack[device_index].is_none()) return stack[device_index].to_device();
  std::vector<Tensor> tensors;
  for (const Value& v : stack) {
    if (v.is_tensor() && v.to_tensor().defined()) tensors.push_back(v.to_tensor());
    if (v.is_tensor_list()) {
      for (const Tensor& t : v.to_tensor_list()) {
        if (t.defined()) tensors.push_back(t);  // undefined: None of a Tensor?[]
      }
    }
  }
  if (tensors.empty()) return kCPU;  // a factory without a device argument
  // copy_ is the one op that moves data between devices: the result is self.
  if (schema.name() == "copy_") return tensors.front().device();
  return check_same_device(tensors, op.name());
}

bool same_geometry(const Tensor& a, const Tensor& b) {
  return a.sizes() == b.sizes() && a.strides() == b.strides() && a.storage_offset() == b.storage_offset();
}

}  // namespace


namespace internal {

Tensor make_fake(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset, DType dtype, Device device) {
  int64_t extent = storage_offset + 1;
  bool empty = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) empty = true;
    extent += (sizes[d] - 1) * strides[d];
  }
  if (empty) extent = storage_offset;
  auto storage = Storage::make(static_cast<size_t>(extent * element_size(dtype)), kMeta);
  auto impl = IntrusivePtr<TensorImpl>::make(std::move(storage), sizes, strides, storage_offset, dtype, device);
  impl->set_backend_key(DispatchKey::kFake);
  return Tensor(std::move(impl));
}

Tensor make_fake_like(const Tensor& like) {
  OPSPEC_INTERNAL_ASSERT(is_fake(like) && like.impl()->subclass() == nullptr);
  return make_like_geometry(*like.impl(), like.impl()->storage()->nbytes(), kMeta);
}

void run_fake_kernel(const OperatorHandle& op, Stack& stack) {
  if (op.schema().name() == "_local_scalar_dense") {
    throw DataDependentOutputError(str_cat(op.name(), ": item() needs the value of ", stack[0].to_tensor().meta_str(),
                                           ", a fake tensor, which has no data (a data-dependent output)"));
  }
  const Device device = output_device(op, stack);
  const std::vector<Argument>& args = op.schema().arguments();
  // Swap fake arguments for meta views, remembering them to map results back.
  struct Swapped {
    size_t index;
    Tensor fake;
    Tensor meta;
  };
  absl::InlinedVector<Swapped, 4> swapped;
  // Every argument replaced, to put back if the meta kernel throws: a handler
  // that catches the error and retries must find its arguments, not meta views.
  absl::InlinedVector<std::pair<size_t, Value>, 4> replaced;
  for (size_t i = 0; i < stack.size(); ++i) {
    Value& v = stack[i];
    if (v.is_tensor()) {
      const Tensor original = v.to_tensor();
      replaced.emplace_back(i, v);
      v = to_meta_arg(original, op);
      if (is_fake(original)) swapped.push_back({i, original, v.to_tensor()});
    } else if (v.is_tensor_list()) {
      replaced.emplace_back(i, v);
      std::vector<Tensor> list = v.to_tensor_list();
      for (Tensor& t : list) t = to_meta_arg(t, op);
      v = Value(std::move(list));
    } else if (v.is_device() && i < args.size() && args[i].name == "device") {
      replaced.emplace_back(i, v);
      v = kMeta;
    }
  }
  const size_t num_args = stack.size();
  try {
    // The Meta kernel answers for device's kernel (Note [Meta kernels standing in for a device]).
    MetaStandInGuard stand_in(device);
    Dispatcher::singleton().redispatch_boxed(op, DispatchKeySet(DispatchKey::kMeta), stack);
  } catch (...) {
    if (stack.size() == num_args) {  // a kernel throws before it replaces the arguments with results
      for (auto& [i, original] : replaced) stack[i] = std::move(original);
    }
    throw;
  }
  // In-place ops may restride or bump the meta view; the fake argument follows.
  for (size_t i = 0; i < num_args && i < args.size(); ++i) {
    if (!args[i].is_write) continue;
    for (const Swapped& s : swapped) {
      if (s.index != i) continue;
      if (!same_geometry(s.fake, s.meta)) {
        s.fake.impl()->set_sizes_and_strides(s.meta.sizes(), s.meta.strides(), s.meta.storage_offset());
      }
      s.fake.impl()->bump_version();
    }
  }
  auto to_fake_result = [&](const Tensor& r) -> Tensor {
    if (!r.defined() || !r.device().is_meta()) return r;
    for (const Swapped& s : swapped) {
      if (r.is_same(s.meta)) return s.fake;  // an in-place op returns self
    }
    return fake_view(r, device);
  };
  for (Value& v : stack) {
    if (v.is_tensor()) {
      v = to_fake_result(v.to_tensor());
    } else if (v.is_tensor_list()) {
      for (Tensor& t : v.to_tensor_list()) t = to_fake_result(t);
    }
  }
}

void register_fake_fallback(Dispatcher& d) {
  d.register_fallback(DispatchKey::kFake,
                      KernelFunction::from_boxed([](const OperatorHandle& op, DispatchKeySet, Stack& stack) {
                        run_fake_kernel(op, stack);
                      }, "fake_tensor_fallback"));
}

}  // namespace internal

FakeTensorMode::~FakeTensorMode() = default;

bool FakeTensorMode::dispatch(OpCall& call) {
  for (Value& v : call.stack()) {
    if (v.is_tensor()) {
      const Tensor& t = v.to_tensor();
      if (t.defined() && !t.is_wrapped_number()) v = from_real(t);
    } else if (v.is_tensor_list()) {
      for (Tensor& t : v.to_tensor_list()) t = from_real(t);
    }
  }
  internal::run_fake_kernel(call.op(), call.stack());
  return true;
}

Tensor FakeTensorMode::from_real(const Tensor& t) {
  if (!t.defined() || is_fake(t) || t.device().is_meta()) return t;
  const uint64_t uid = t.impl()->uid();
  if (auto it = tensors_.find(uid); it != tensors_.end()) return it->second;
  const Storage& real = t.impl()->storage();
  auto [entry, inserted] = storages_.try_emplace(real.get());
  if (inserted) entry->second = {real, Storage::make(real->nbytes(), kMeta)};
  auto impl = IntrusivePtr<TensorImpl>::make(entry->second.fake, t.sizes(), t.strides(), t.storage_offset(),
                                             t.dtype(), t.device());
  impl->set_backend_key(DispatchKey::kFake);
  impl->set_wrapped_number(t.is_wrapped_number());
  Tensor fake(std::move(impl));
  // A tensor that requires grad gives a leaf that does, as PyTorch's fake
  // tensors: autograd then records on fakes, so make_fx of a function that
  // calls backward traces the joint graph.
  if (t.requires_grad() && is_floating(t.dtype())) fake.requires_grad_();
  tensors_.emplace(uid, fake);
  return fake;
}

void FakeTensorMode::clear_memo() {
  tensors_.clear();
  storages_.clear();
}

}  // namespace opspec
