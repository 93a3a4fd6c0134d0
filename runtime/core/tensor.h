// tensor.h: Tensor, a reference-counted handle to strided data (TensorImpl),
// and the storage it views. Ops on tensors live in runtime/ops/ops.h.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "runtime/core/allocator.h"
#include "runtime/core/device.h"
#include "runtime/core/dispatch_key.h"
#include "runtime/core/dtype.h"
#include "runtime/core/error.h"
#include "runtime/core/intrusive_ptr.h"
#include "runtime/core/object_pool.h"
#include "runtime/core/scalar.h"

namespace opspec {

// SizeVec: sizes or strides, inline up to 5 dims.
using SizeVec = absl::InlinedVector<int64_t, 5>;
// IntArrayRef: a view of sizes, strides or dims (PyTorch's name).
using IntArrayRef = absl::Span<const int64_t>;

class TensorSubclass;  // runtime/dispatch/mode.h
namespace autograd {
class Node;  // runtime/autograd/node.h
}  // namespace autograd
class TensorImpl;
namespace internal {
struct TensorRecycler;  // tensor.cc, See Note [Recycled tensors]

// throw_undefined_tensor: throws "<what>() called on an undefined Tensor" (cold).
[[noreturn, gnu::cold]] void throw_undefined_tensor(const char* what);

// AutogradMetaBase: what runtime/autograd keeps on a tensor that takes part
// in autograd (its AutogradMeta derives from it). See Note [Autograd meta].
struct AutogradMetaBase {
  virtual ~AutogradMetaBase() = default;
  // adopt_dying: the tensor's last handle is gone; true when a graph that
  // still accumulates into it took it over (See Note [Graphs keep their
  // leaves]). Asked only while may_adopt is set, so most tensors pay a load.
  virtual bool adopt_dying(TensorImpl* impl) noexcept = 0;
  bool may_adopt = false;
};
}  // namespace internal

// Note [Every view is marked]
// PyTorch's ADInplaceOrView kernels give every view a CreationMeta, whatever
// its base's requires_grad: NO_GRAD_MODE when made with grad mode off,
// MULTI_OUTPUT_NODE for a Tensor[] view op's results, and autograd refuses an
// in-place op it would record on such a view (See Note [Views that refuse
// in-place changes] in runtime/autograd/copy_slices.h). Views of plain tensors
// never reach opspec's Autograd key, so the mark is set where every view is
// made, make_alias_view (TensorImpl::view_creation; the grad mode is core's,
// runtime/core/grad_mode.h): one grad-mode read per view. PyTorch's
// IN_CUSTOM_FUNCTION and INFERENCE_MODE have no counterpart: opspec has no
// custom Functions or inference mode.

// CreationMeta: how a view op made a view, as PyTorch's CreationMeta; anything
// but kDefault refuses in-place changes under grad mode.
enum class CreationMeta : uint8_t {
  kDefault,
  kMultiOutputNode,  // one of the views a Tensor[] view op returned (split's), or a view of one
  kNoGradMode,       // made with grad mode off, or a view of such a view
};

// propagate_creation_meta: a view of a view keeps the stricter mark (PyTorch's helper).
inline CreationMeta propagate_creation_meta(CreationMeta prev, CreationMeta made) {
  return made == CreationMeta::kDefault ? prev : made;
}

// StorageImpl: a block of device memory shared by a tensor and its views.
class StorageImpl : public RefCounted, public internal::Pooled {  // See Note [Object pool].
 public:
  // Allocates nbytes on device with that device's allocator.
  StorageImpl(size_t nbytes, Device device);
  ~StorageImpl() override;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  // version: bumped with the version of every tensor over this storage, so a
  // change through any view shows (autograd's saved tensors check it, as
  // PyTorch's version counter shared by a base and its views).
  uint64_t version() const { return version_; }

 private:
  friend struct internal::TensorRecycler;
  friend class TensorImpl;
  uint64_t version_ = 0;
  void* data_;
  size_t nbytes_;
  Device device_;
  Allocator* allocator_;
};

// Storage: shared ownership of a StorageImpl.
using Storage = IntrusivePtr<StorageImpl>;

// TensorImpl: sizes, strides, offset, dtype and device over a Storage, plus the
// dispatch keys the tensor contributes and an optional subclass handler.
class TensorImpl : public RefCounted, public internal::Pooled {  // See Note [Object pool].
 public:
  TensorImpl(Storage storage, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset,
             DType dtype, Device device);
  // Contiguous: tag for the constructor of a fresh contiguous tensor of numel elements.
  struct Contiguous {
    int64_t numel;
  };
  // A contiguous tensor over all of storage: strides computed in place, no
  // contiguity scan (every op's output is one of these).
  TensorImpl(Storage storage, IntArrayRef sizes, Contiguous c, DType dtype, Device device);
  // SameGeometry: tag for the constructor of a tensor over storage with like's
  // sizes, strides, offset, dtype, device and dispatch keys (nothing else of
  // like's: no subclass, version, marks or identity), copied, not recomputed.
  struct SameGeometry {};
  TensorImpl(Storage storage, const TensorImpl& like, SameGeometry);

  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t storage_offset() const { return storage_offset_; }
  int64_t numel() const { return numel_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  const Storage& storage() const { return storage_; }
  bool is_contiguous() const { return is_contiguous_; }
  DispatchKeySet key_set() const { return key_set_; }

  // set_sizes_and_strides: restrides in place (in-place view ops like squeeze_).
  void set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);

  // Wrapped numbers are 0-dim tensors made from C++ scalars (`x + 1.0`); they
  // take part in type promotion as scalars and print as numbers, as in PyTorch.
  bool is_wrapped_number() const { return wrapped_number_; }
  void set_wrapped_number(bool v) { wrapped_number_ = v; }

  // materialize_from: a fake tensor takes real's storage, geometry and keys, in
  // place, so every handle to it now sees data (the compiler's lazy capture).
  void materialize_from(const TensorImpl& real);

  // dynamic_dims / static_dims: bit d set when dim d was marked with
  // mark_dynamic / mark_static (runtime/compile/guards.h).
  uint64_t dynamic_dims() const { return dynamic_dims_; }
  uint64_t static_dims() const { return static_dims_; }
  void set_dim_marks(uint64_t dynamic_dims, uint64_t static_dims) {
    dynamic_dims_ = dynamic_dims;
    static_dims_ = static_dims;
  }

  // set_backend_key: the backend key this tensor dispatches to when it is not
  // its device's: fake tensors claim cpu or cuda but dispatch to Fake.
  void set_backend_key(DispatchKey key);

  // subclass: the handler consulted for every op this tensor takes part in.
  const std::shared_ptr<TensorSubclass>& subclass() const { return subclass_; }
  void set_subclass(std::shared_ptr<TensorSubclass> s);

  // uid: a process-unique id, assigned on first request (DebugMode's t$N uses it).
  uint64_t uid() const;

  // version: bumped by every in-place op, so recorders can tell mutations apart.
  uint64_t version() const { return version_; }
  void bump_version() {
    ++version_;
    if (storage_) ++storage_->version_;
  }

  // view_base: the root base this tensor is a view of, when a view op made it
  // (the kernels of ops whose schema aliases, as PyTorch's ADInplaceOrView
  // kernels record; not detach or _unsafe_view), else null. Autograd reads it
  // for in-place changes to views (See Note [In-place changes to views]).
  TensorImpl* view_base() const { return view_base_.get(); }
  // view_version: the storage's version when the view op made this view
  // (autograd tracks a view whose base changed since; See Note [In-place
  // changes to views]).
  uint64_t view_version() const { return view_version_; }
  // view_creation: how the view op made this view (kDefault when no view op did).
  CreationMeta view_creation() const { return view_creation_; }
  void set_view_base(IntrusivePtr<TensorImpl> base, CreationMeta creation) {
    view_version_ = storage_ ? storage_->version_ : 0;
    view_base_ = std::move(base);
    view_creation_ = creation;
  }
  // dispatch_keys: the keys calls with this tensor dispatch on: its own, and
  // a view's base's Autograd key (a view taken before its base gained history
  // must reach autograd, which tracks it; See Note [In-place changes to views]).
  DispatchKeySet dispatch_keys() const {
    return !view_base_ ? key_set_ : key_set_ | (view_base_->key_set_ & DispatchKeySet(DispatchKey::kAutograd));
  }
  // storage_unshared: no other tensor uses this one's storage (a root base
  // that only this view keeps alive does not count), so it may be reused.
  bool storage_unshared() const {
    const int64_t holders = view_base_ && view_base_->use_count() == 1 && view_base_->storage_ == storage_ ? 2 : 1;
    return storage_ && storage_->use_count() == holders;
  }

  // autograd_meta: runtime/autograd's record (requires_grad, grad, grad_fn), or null.
  internal::AutogradMetaBase* autograd_meta() const { return autograd_meta_.get(); }
  void set_autograd_meta(std::unique_ptr<internal::AutogradMetaBase> meta) { autograd_meta_ = std::move(meta); }
  // set_autograd_key: whether calls with this tensor go through the Autograd key.
  void set_autograd_key(bool on) {
    key_set_ = on ? key_set_.add(DispatchKey::kAutograd) : key_set_.remove(DispatchKey::kAutograd);
  }

  // trace_owner / trace_index: a slot one tracer may claim (owner 0: free) to
  // find this tensor's record without a lookup. See Note [Trace slots] in
  // runtime/trace/proxy_tensor.cc.
  std::atomic<uint64_t>& trace_owner() const { return trace_owner_; }
  uint32_t& trace_index() const { return trace_index_; }

  // release_last: what IntrusivePtr does when the last owner lets go: keeps
  // the object and its storage for the thread's next fresh tensor, or deletes
  // them. See Note [Recycled tensors] in tensor.cc.
  static void release_last(TensorImpl* impl) noexcept;

 private:
  friend struct internal::TensorRecycler;
  void refresh();

  Storage storage_;
  SizeVec sizes_;
  SizeVec strides_;
  int64_t storage_offset_;
  int64_t numel_ = 1;
  DType dtype_;
  Device device_;
  bool is_contiguous_ = true;
  bool wrapped_number_ = false;
  CreationMeta view_creation_ = CreationMeta::kDefault;  // with view_base_
  DispatchKeySet key_set_;
  uint64_t version_ = 0;
  uint64_t dynamic_dims_ = 0;
  uint64_t static_dims_ = 0;
  mutable std::atomic<uint64_t> uid_{0};
  mutable std::atomic<uint64_t> trace_owner_{0};
  mutable uint32_t trace_index_ = 0;  // read and written only by the owner's thread
  std::shared_ptr<TensorSubclass> subclass_;
  std::unique_ptr<internal::AutogradMetaBase> autograd_meta_;
  IntrusivePtr<TensorImpl> view_base_;
  uint64_t view_version_ = 0;
};

// OPSPEC_ACCESSOR: the metadata accessors kernels call several times per op.
// With their undefined-tensor check GCC left some out of line, which cost a
// 1-element add more than the checks themselves (callgrind), so they are
// always inlined.
#define OPSPEC_ACCESSOR __attribute__((always_inline))

// Tensor: the value type users and kernels pass around. Copying shares data.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(IntrusivePtr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* impl() const { return impl_.get(); }

  // The metadata accessors throw opspec::Error on an undefined tensor, as
  // PyTorch's ("sizes() called on an undefined Tensor"), never dereference null.
  OPSPEC_ACCESSOR IntArrayRef sizes() const { return checked_impl("sizes")->sizes(); }
  OPSPEC_ACCESSOR IntArrayRef strides() const { return checked_impl("strides")->strides(); }
  // size / stride: one dim, negative dims count from the end.
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  OPSPEC_ACCESSOR int64_t dim() const { return checked_impl("dim")->dim(); }
  OPSPEC_ACCESSOR int64_t numel() const { return checked_impl("numel")->numel(); }
  OPSPEC_ACCESSOR int64_t storage_offset() const { return checked_impl("storage_offset")->storage_offset(); }
  OPSPEC_ACCESSOR DType dtype() const { return checked_impl("dtype")->dtype(); }
  OPSPEC_ACCESSOR Device device() const { return checked_impl("device")->device(); }
  OPSPEC_ACCESSOR bool is_contiguous() const { return checked_impl("is_contiguous")->is_contiguous(); }
  OPSPEC_ACCESSOR bool is_floating_point() const { return is_floating(dtype()); }
  OPSPEC_ACCESSOR int64_t element_size() const { return opspec::element_size(dtype()); }
  OPSPEC_ACCESSOR int64_t nbytes() const { return numel() * element_size(); }
  OPSPEC_ACCESSOR DispatchKeySet key_set() const { return checked_impl("key_set")->key_set(); }
  OPSPEC_ACCESSOR bool is_wrapped_number() const { return checked_impl("is_wrapped_number")->is_wrapped_number(); }
  // subclass: the TensorSubclass handler this tensor carries (with_subclass), or null.
  OPSPEC_ACCESSOR const std::shared_ptr<TensorSubclass>& subclass() const {
    return checked_impl("subclass")->subclass();
  }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  // is_alias_of: shares storage with o (a view of it, or o of it).
  OPSPEC_ACCESSOR bool is_alias_of(const Tensor& o) const {
    return checked_impl("is_alias_of")->storage() == o.checked_impl("is_alias_of")->storage();
  }

  // data_ptr<T>: typed pointer to the first element; checks dtype and that the
  // tensor holds data (not meta, not a fake tensor).
  template <class T> T* data_ptr() const {
    check_data_access("data_ptr");
    OPSPEC_CHECK(dtype_of<T>() == dtype(), "data_ptr: tensor has dtype ", dtype_short_name(dtype()),
                 " but ", dtype_short_name(dtype_of<T>()), " was requested");
    return static_cast<T*>(raw_data()) ;
  }
  // raw_data: untyped pointer to the first element (no checks; kernels only).
  void* raw_data() const {
    return static_cast<char*>(impl_->storage()->data()) + impl_->storage_offset() * element_size();
  }

  // to_vector<T>: the elements in logical (row-major) order, converted to T.
  template <class T> std::vector<T> to_vector() const;
  // item: the value of a one-element tensor (dispatches aten::_local_scalar_dense).
  Scalar item(const std::source_location& loc = std::source_location::current()) const;
  // item<T>: item() converted to T.
  template <class T> T item(const std::source_location& loc = std::source_location::current()) const {
    return item(loc).to<T>();
  }

  // meta_str: short metadata, "f32[2, 3]" (and the device when not cpu).
  std::string meta_str() const;
  // str: metadata and values, like torch's repr, for messages and debugging.
  std::string str() const;

  // Autograd, defined in runtime/autograd (See runtime/autograd/README.md).
  // requires_grad_: makes this floating-point tensor a leaf that requires grad
  // (or stop); throws for integer dtypes and non-leaves set to false, as PyTorch.
  const Tensor& requires_grad_(bool requires_grad = true) const;
  bool requires_grad() const;
  // is_leaf: no grad_fn (made by the user, or by an op that recorded nothing).
  bool is_leaf() const;
  // grad: the gradient accumulated by backward (undefined when none); set_grad replaces it.
  Tensor grad() const;
  void set_grad(const Tensor& grad) const;
  // grad_fn: the node that made this tensor (MmBackward0, ...), null for leaves.
  std::shared_ptr<autograd::Node> grad_fn() const;
  // retain_grad: a non-leaf keeps its grad after backward, as leaves do.
  void retain_grad() const;
  bool retains_grad() const;
  // detach: a new tensor sharing data, out of the graph (dispatches aten::detach).
  Tensor detach(const std::source_location& loc = std::source_location::current()) const;
  // backward: gradients of this tensor w.r.t. the graph's leaves, accumulated
  // into their grad(); gradient may be omitted for a one-element tensor.
  void backward(const Tensor& gradient = {}, std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;

  friend bool operator==(const Tensor&, const Tensor&) = delete;  // use is_same or ops::equal

 private:
  void check_data_access(const char* what) const;
  // checked_impl: impl_, or the error of what() on an undefined tensor: one
  // predictable branch, the throw out of line.
  OPSPEC_ACCESSOR const TensorImpl* checked_impl(const char* what) const {
    if (!impl_) [[unlikely]] internal::throw_undefined_tensor(what);
    return impl_.get();
  }
  IntrusivePtr<TensorImpl> impl_;
};

// TensorList: a view of several tensors (the Tensor[] schema type).
using TensorList = absl::Span<const Tensor>;

// contiguous_strides: row-major strides for sizes.
SizeVec contiguous_strides(IntArrayRef sizes);

// is_contiguous_strides: whether strides are row-major for sizes, by
// PyTorch's rule (size-1 dims may have any stride; empty tensors are contiguous).
bool is_contiguous_strides(IntArrayRef sizes, IntArrayRef strides);

// compute_numel: product of sizes (1 for a 0-dim tensor); throws when it
// overflows int64 (See Note [Checked sizes] in tensor.cc).
int64_t compute_numel(IntArrayRef sizes);

// wrap_dim: maps dim in [-ndim, ndim) to [0, ndim); throws naming op otherwise.
// A 0-dim tensor accepts dims -1 and 0, as in PyTorch.
int64_t wrap_dim(int64_t dim, int64_t ndim, std::string_view op);

// format_sizes: "[2, 3]".
std::string format_sizes(IntArrayRef sizes);

namespace internal {

// DataAccessHook: called before a tensor's data is read through data_ptr,
// to_vector or item on this thread (the compiler flushes pending graphs there).
using DataAccessHook = void (*)(const TensorImpl* impl, const char* what);
extern constinit thread_local DataAccessHook tls_data_access_hook;

// throw_too_large: throws the error of a tensor whose geometry overflows int64
// ("Storage size calculation overflowed with sizes=[...]"); what names the
// quantity, dtype (when known) makes the figure a byte count.
[[noreturn]] void throw_too_large(IntArrayRef sizes, std::optional<DType> dtype, std::string_view what);
// checked_span: the contiguous span in bytes of a tensor of sizes and dtype
// (size-0 dims count as 1); throws on a negative size, and naming what on overflow.
int64_t checked_span(IntArrayRef sizes, DType dtype, std::string_view what);

// make_tensor: a new contiguous tensor with uninitialised data, bypassing the
// dispatcher (kernels use this for their outputs); throws on negative sizes
// and on sizes whose span overflows int64 (See Note [Checked sizes]).
Tensor make_tensor(IntArrayRef sizes, DType dtype, Device device);
// make_like_geometry: a new tensor over fresh storage of nbytes on
// storage_device with like's sizes, strides, offset, dtype, device and keys
// (none of like's subclass, version, marks or identity).
Tensor make_like_geometry(const TensorImpl& like, size_t nbytes, Device storage_device);
// make_strided: a new tensor with the given strides over fresh storage large enough for them.
Tensor make_strided(IntArrayRef sizes, IntArrayRef strides, DType dtype, Device device);
// make_tensor_with_strides: make_tensor (recycled storage) when strides are
// empty or exactly row-major, else make_strided: a result's allocation in the
// layout its op computed (See Note [Memory formats]).
Tensor make_tensor_with_strides(IntArrayRef sizes, IntArrayRef strides, DType dtype, Device device);
// make_view: a tensor sharing base's storage with new geometry.
Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
// make_alias_view: make_view for a view op's result: it also remembers the
// root base (TensorImpl::view_base: base's own root when base is a view) and
// how it was made (TensorImpl::view_creation: under no_grad, or, multi_output,
// as one of a Tensor[] view op's results; See Note [Every view is marked]).
Tensor make_alias_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset,
                       bool multi_output = false);
// make_wrapped_number: a 0-dim tensor holding s, flagged as a wrapped number.
Tensor make_wrapped_number(const Scalar& s);
// read_scalar: the value of a one-element CPU tensor as a Scalar of its kind
// (bool, int64 exactly, or double; f32/f16/bf16 widen exactly).
Scalar read_scalar(const Tensor& t);
// read_element_as_double: the element at a linear row-major index of a CPU tensor.
double read_element_as_double(const Tensor& t, int64_t linear_index);

}  // namespace internal

template <class T>
std::vector<T> Tensor::to_vector() const {
  check_data_access("to_vector");
  std::vector<T> out;
  out.reserve(static_cast<size_t>(numel()));
  const int64_t n = numel();
  OPSPEC_DISPATCH_ALL_DTYPES(dtype(), "to_vector", [&] {
    const scalar_t* base = static_cast<const scalar_t*>(raw_data());
    const int64_t nd = dim();
    SizeVec idx(static_cast<size_t>(nd), 0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t off = 0;
      for (int64_t d = 0; d < nd; ++d) off += idx[d] * strides()[d];
      if constexpr (std::is_same_v<scalar_t, Half> || std::is_same_v<scalar_t, BFloat16>) {
        out.push_back(static_cast<T>(static_cast<float>(base[off])));
      } else {
        out.push_back(static_cast<T>(base[off]));
      }
      for (int64_t d = nd - 1; d >= 0; --d) {
        if (++idx[d] < sizes()[d]) break;
        idx[d] = 0;
      }
    }
  });
  return out;
}

}  // namespace opspec
