#include "runtime/core/tensor.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/core/grad_mode.h"
#include "runtime/core/internal/unique_id.h"

namespace opspec {

StorageImpl::StorageImpl(size_t nbytes, Device device)
    : nbytes_(nbytes), device_(device), allocator_(get_allocator(device.type)) {
  data_ = allocator_->allocate_on(device, nbytes);
}

StorageImpl::~StorageImpl() { allocator_->deallocate(data_, nbytes_); }

// Note [Checked sizes]
// Sizes come from users and spec files, so every product that geometry is
// built from (numel, contiguous strides, a strided tensor's extent, byte
// counts) is computed with overflow checks: `zeros([65536] * 4)` must fail
// with a message, not wrap to an empty buffer that later views write past.
// The bound is PyTorch's: the contiguous span of a tensor, its sizes with 0
// counted as 1 times its element size, fits in int64 even when numel is 0,
// so the strides of any tensor that exists can be computed without overflow.
namespace {

// log2_of: log2 of the product of sizes (0 counted as 1), for messages.
double log2_of(IntArrayRef sizes) {
  double bits = 0;
  for (int64_t s : sizes) bits += std::log2(static_cast<double>(std::max<int64_t>(s, 1)));
  return bits;
}

// fill_contiguous_strides: row-major strides of sizes into out (size-0 dims
// count as 1); throws when they overflow (See Note [Checked sizes]).
void fill_contiguous_strides(IntArrayRef sizes, int64_t* out) {
  int64_t acc = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    out[d] = acc;
    if (__builtin_mul_overflow(acc, std::max<int64_t>(sizes[d], 1), &acc)) {
      internal::throw_too_large(sizes, std::nullopt, "contiguous strides");
    }
  }
}

}  // namespace

namespace internal {

void throw_too_large(IntArrayRef sizes, std::optional<DType> dtype, std::string_view what) {
  const double bits = log2_of(sizes) + (dtype ? std::log2(static_cast<double>(element_size(*dtype))) : 0.0);
  OPSPEC_FAIL("Storage size calculation overflowed with sizes=", format_sizes(sizes), ": ", what, " of a ",
              dtype ? str_cat(dtype_torch_name(*dtype), " ") : std::string(), "tensor of about 2^",
              absl::StrFormat("%.1f", bits), dtype ? " bytes" : " elements",
              " is too large (at most 2^63 - 1; a size-0 dim still counts as 1 in the strides)");
}

int64_t checked_span(IntArrayRef sizes, DType dtype, std::string_view what) {
  int64_t span = element_size(dtype);
  bool overflow = false;  // checked once, after the loop: make_tensor calls this for every op's result
  for (int64_t s : sizes) {
    OPSPEC_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", format_sizes(sizes));
    overflow |= __builtin_mul_overflow(span, s > 0 ? s : 1, &span);
  }
  if (__builtin_expect(overflow, 0)) throw_too_large(sizes, dtype, what);
  return span;
}

}  // namespace internal

// Note [Recycled tensors]
// Every op makes a tensor and, in a chain, lets the previous one die: a
// TensorImpl and its StorageImpl built, destroyed and given back to the pool
// each time (on a warm compiled call, a third of the instructions went to the
// lives of fakes and results). When the last owner lets a tensor go and its
// storage has no other owner (no view, no subclass, CPU or meta memory), the
// data goes back to the allocator as usual, which counts the free, but the
// pair is kept on a short per-thread list; the thread's next fresh tensor
// (make_tensor, make_like_geometry) resets it in place instead of allocating
// two objects. A dying tensor first lets go of its view base and its
// autograd history (a recorded op's result is kept too). Everything
// identity-related starts anew (uid, version, trace slot, marks), so a
// recycled tensor is indistinguishable from a new one, as a pooled one
// already was: only its address repeats.
namespace internal {

struct TensorRecycler {
  static constexpr int kKept = 256;
  TensorImpl* kept[kKept];
  int count = 0;
  bool destroyed = false;  // the thread's list is gone: delete as usual

  ~TensorRecycler() {
    destroyed = true;
    while (count > 0) {
      TensorImpl* impl = kept[--count];
      // Its memory went back at keep(); the allocator it came from may be gone
      // (set_allocator in a test), so the empty storage is deleted as meta.
      impl->storage_->allocator_ = get_allocator(DeviceType::kMeta);
      delete impl;
    }
  }

  // keep: takes impl (last owner gone) unless it cannot be recycled.
  bool keep(TensorImpl* impl) {
    // A dead view lets go of its base first: the base goes (it shares the
    // storage), and the view may then be kept instead.
    impl->view_base_.reset();
    // Its autograd history goes now, as with the tensor (a recorded op's
    // result is the common case). The graph may let other tensors go, which
    // come back here: nothing of the list is read before this.
    impl->autograd_meta_.reset();
    StorageImpl* storage = impl->storage_.get();
    if (destroyed || count == kKept || storage == nullptr || storage->use_count() != 1 || impl->subclass_) {
      return false;
    }
    const DeviceType type = storage->device_.type;
    if (type != DeviceType::kCPU && type != DeviceType::kMeta) return false;
    storage->allocator_->deallocate(std::exchange(storage->data_, nullptr), storage->nbytes_);
    storage->nbytes_ = 0;
    kept[count++] = impl;
    return true;
  }

  // take: a kept pair whose storage now holds nbytes on storage_device (its
  // TensorImpl's fields still the dead tensor's), or null. It resets every
  // field a constructor would set; the size check makes a new field a compile
  // error here until it is reset too.
  static_assert(sizeof(void*) != 8 || (sizeof(TensorImpl) == 232 && sizeof(StorageImpl) == 56),
                "TensorImpl or StorageImpl changed: reset the new field in TensorRecycler::take");
  TensorImpl* take(size_t nbytes, Device storage_device) {
    if (count == 0 || (storage_device.type != DeviceType::kCPU && storage_device.type != DeviceType::kMeta)) {
      return nullptr;
    }
    Allocator* allocator = get_allocator(storage_device.type);
    void* data = allocator->allocate_on(storage_device, nbytes);  // may throw: nothing taken yet
    TensorImpl* impl = kept[--count];
    StorageImpl& storage = *impl->storage_;
    storage.data_ = data;
    storage.nbytes_ = nbytes;
    storage.device_ = storage_device;
    storage.allocator_ = allocator;
    storage.version_ = 0;
    impl->storage_offset_ = 0;
    impl->wrapped_number_ = false;
    impl->version_ = 0;
    impl->view_version_ = 0;
    impl->view_creation_ = CreationMeta::kDefault;
    impl->dynamic_dims_ = 0;
    impl->static_dims_ = 0;
    impl->uid_.store(0, std::memory_order_relaxed);
    impl->trace_owner_.store(0, std::memory_order_relaxed);
    impl->trace_index_ = 0;
    return impl;
  }

  // assign_dims: v = dims; a recycled tensor usually has as many dims as the
  // new one, and copying in place is far cheaper than InlinedVector::assign.
  static void assign_dims(SizeVec& v, IntArrayRef dims) {
    if (v.size() == dims.size()) {
      std::copy(dims.begin(), dims.end(), v.begin());
    } else {
      v.assign(dims.begin(), dims.end());
    }
  }

  // take_contiguous: take() set up as TensorImpl's Contiguous constructor sets up a new one.
  TensorImpl* take_contiguous(IntArrayRef sizes, int64_t numel, size_t nbytes, DType dtype, Device device) {
    TensorImpl* impl = take(nbytes, device);
    if (impl == nullptr) return nullptr;
    assign_dims(impl->sizes_, sizes);
    if (impl->strides_.size() != sizes.size()) impl->strides_.resize(sizes.size());
    fill_contiguous_strides(sizes, impl->strides_.data());
    impl->numel_ = numel;
    impl->dtype_ = dtype;
    impl->device_ = device;
    impl->is_contiguous_ = true;
    impl->key_set_ = DispatchKeySet(backend_key(device.type));
    return impl;
  }

  // take_like: take() set up as TensorImpl's SameGeometry constructor sets up a new one.
  TensorImpl* take_like(const TensorImpl& like, size_t nbytes, Device storage_device) {
    TensorImpl* impl = take(nbytes, storage_device);
    if (impl == nullptr) return nullptr;
    assign_dims(impl->sizes_, like.sizes_);
    assign_dims(impl->strides_, like.strides_);
    impl->storage_offset_ = like.storage_offset_;
    impl->numel_ = like.numel_;
    impl->dtype_ = like.dtype_;
    impl->device_ = like.device_;
    impl->is_contiguous_ = like.is_contiguous_;
    impl->key_set_ = like.key_set_.remove(DispatchKey::kPython).remove(DispatchKey::kAutograd);
    return impl;
  }
};

namespace {
thread_local TensorRecycler tls_recycler;
}  // namespace

}  // namespace internal

void TensorImpl::release_last(TensorImpl* impl) noexcept {
  internal::AutogradMetaBase* meta = impl->autograd_meta_.get();
  if (meta != nullptr && meta->may_adopt && meta->adopt_dying(impl)) return;  // a graph holds the leaf now
  if (!internal::tls_recycler.keep(impl)) delete impl;
}

TensorImpl::TensorImpl(Storage storage, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset,
                       DType dtype, Device device)
    : storage_(std::move(storage)),
      sizes_(sizes.begin(), sizes.end()),
      strides_(strides.begin(), strides.end()),
      storage_offset_(storage_offset),
      dtype_(dtype),
      device_(device),
      key_set_(backend_key(device.type)) {
  refresh();
}

TensorImpl::TensorImpl(Storage storage, IntArrayRef sizes, Contiguous c, DType dtype, Device device)
    : storage_(std::move(storage)),
      sizes_(sizes.begin(), sizes.end()),
      storage_offset_(0),
      numel_(c.numel),
      dtype_(dtype),
      device_(device),
      key_set_(backend_key(device.type)) {
  strides_.resize(sizes.size());
  fill_contiguous_strides(sizes, strides_.data());
}

TensorImpl::TensorImpl(Storage storage, const TensorImpl& like, SameGeometry)
    : storage_(std::move(storage)),
      sizes_(like.sizes_),
      strides_(like.strides_),
      storage_offset_(like.storage_offset_),
      numel_(like.numel_),
      dtype_(like.dtype_),
      device_(like.device_),
      is_contiguous_(like.is_contiguous_),
      key_set_(like.key_set_.remove(DispatchKey::kPython).remove(DispatchKey::kAutograd)) {}

void TensorImpl::refresh() {
  numel_ = compute_numel(sizes_);
  is_contiguous_ = numel_ == 0 || is_contiguous_strides(sizes_, strides_);
}

void TensorImpl::set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) {
  sizes_.assign(sizes.begin(), sizes.end());
  strides_.assign(strides.begin(), strides.end());
  storage_offset_ = storage_offset;
  refresh();
}

void TensorImpl::set_backend_key(DispatchKey key) {
  OPSPEC_INTERNAL_ASSERT(kBackendKeys.has(key));
  key_set_ = (key_set_ - kBackendKeys).add(key);
}

void TensorImpl::set_subclass(std::shared_ptr<TensorSubclass> s) {
  subclass_ = std::move(s);
  key_set_ = subclass_ ? key_set_.add(DispatchKey::kPython) : key_set_.remove(DispatchKey::kPython);
}

uint64_t TensorImpl::uid() const {
  // Tracing asks for one per op: ids come in per-thread blocks (next_unique_id).
  uint64_t id = uid_.load(std::memory_order_relaxed);
  if (id != 0) return id;
  struct TensorUids;
  const uint64_t fresh = internal::next_unique_id<TensorUids>();
  if (!uid_.compare_exchange_strong(id, fresh, std::memory_order_relaxed)) return id;  // another thread won
  return fresh;
}

// size(d) and stride(d) of a 0-dim tensor fail as c10's TensorImpl::size
// does (no wrap_scalar): wrap_dim lets a scalar take dim 0 or -1.
void internal::throw_undefined_tensor(const char* what) {
  OPSPEC_FAIL(what, "() called on an undefined Tensor");
}

int64_t Tensor::size(int64_t dim) const {
  OPSPEC_CHECK(this->dim() > 0, "Tensor::size: Dimension specified as ", dim, " but tensor has no dimensions");
  return sizes()[wrap_dim(dim, this->dim(), "Tensor::size")];
}
int64_t Tensor::stride(int64_t dim) const {
  OPSPEC_CHECK(this->dim() > 0, "Tensor::stride: Dimension specified as ", dim, " but tensor has no dimensions");
  return strides()[wrap_dim(dim, this->dim(), "Tensor::stride")];
}

namespace internal {
constinit thread_local DataAccessHook tls_data_access_hook = nullptr;
}  // namespace internal

void TensorImpl::materialize_from(const TensorImpl& real) {
  storage_ = real.storage_;
  sizes_ = real.sizes_;
  strides_ = real.strides_;
  storage_offset_ = real.storage_offset_;
  dtype_ = real.dtype_;
  device_ = real.device_;
  const bool autograd = key_set_.has(DispatchKey::kAutograd);  // this tensor's own history, not real's
  key_set_ = subclass_ ? real.key_set_.add(DispatchKey::kPython) : real.key_set_;
  set_autograd_key(autograd);
  refresh();
}

void Tensor::check_data_access(const char* what) const {
  OPSPEC_CHECK(defined(), "Tensor::", what, ": tensor is undefined");
  if (internal::tls_data_access_hook != nullptr) internal::tls_data_access_hook(impl_.get(), what);
  // Subclass tensors with real storage (e.g. a NaN-checking wrapper) may be
  // read; fake tensors keep meta storage whatever device they claim.
  const Device storage_device = impl_->storage()->device();
  if (storage_device.is_meta() && !device().is_meta()) {
    throw DataDependentOutputError(str_cat("Tensor::", what, ": ", meta_str(), " is a fake tensor and has no data"));
  }
  OPSPEC_CHECK(!storage_device.is_meta(), "Tensor::", what, ": ", meta_str(), " is a meta tensor and has no data");
  OPSPEC_CHECK(storage_device.is_cpu(), "Tensor::", what, ": tensor on ", device().str(),
               " has no host data; copy it to cpu first");
}

std::string Tensor::meta_str() const {
  if (!defined()) return "undefined";
  std::string s = str_cat(dtype_short_name(dtype()), format_sizes(sizes()));
  if (!device().is_cpu()) str_append(&s, " (", device().str(), ")");
  return s;
}

std::string Tensor::str() const {
  if (!defined()) return "Tensor(undefined)";
  std::string s = str_cat("tensor(", meta_str());
  if (impl_->storage()->device().is_cpu()) {
    constexpr size_t kMaxShown = 16;
    std::vector<std::string> parts;
    // Each dtype printed as PyTorch prints it: integers exactly, bools as True/False.
    const auto show = [&](const auto& values, auto text) {
      for (size_t i = 0; i < values.size() && i < kMaxShown; ++i) parts.push_back(text(values[i]));
      if (values.size() > kMaxShown) parts.push_back("...");
    };
    if (dtype() == DType::kBool) {
      show(to_vector<int64_t>(), [](int64_t v) { return std::string(v ? "True" : "False"); });
    } else if (!is_floating(dtype())) {
      show(to_vector<int64_t>(), [](int64_t v) { return str_cat(v); });
    } else {
      show(to_vector<double>(), [](double v) { return format_double(v); });
    }
    str_append(&s, ", [", absl::StrJoin(parts, ", "), "]");
  }
  return s + ")";
}

SizeVec contiguous_strides(IntArrayRef sizes) {
  SizeVec strides(sizes.size());
  fill_contiguous_strides(sizes, strides.data());
  return strides;
}

bool is_contiguous_strides(IntArrayRef sizes, IntArrayRef strides) {
  // Any empty tensor is contiguous, whatever strides its other dims have (c10's _compute_contiguous).
  if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end()) return true;
  int64_t expected = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

int64_t compute_numel(IntArrayRef sizes) {
  int64_t n = 1;
  bool overflow = false;  // a later size-0 dim still makes the product 0
  for (int64_t s : sizes) overflow |= __builtin_mul_overflow(n, s, &n);
  if (__builtin_expect(overflow, 0)) {
    if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end()) return 0;
    internal::throw_too_large(sizes, std::nullopt, "the number of elements");
  }
  return n;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, std::string_view op) {
  const int64_t n = std::max<int64_t>(ndim, 1);  // 0-dim tensors accept -1 and 0
  OPSPEC_CHECK(dim >= -n && dim < n, op, ": Dimension out of range (expected to be in range of [", -n,
               ", ", n - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

std::string format_sizes(IntArrayRef sizes) { return str_cat("[", absl::StrJoin(sizes, ", "), "]"); }

namespace internal {

Tensor make_tensor(IntArrayRef sizes, DType dtype, Device device) {
  checked_span(sizes, dtype, "the storage");  // See Note [Checked sizes]
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;  // at most span: cannot overflow now
  const size_t nbytes = static_cast<size_t>(n * element_size(dtype));
  if (TensorImpl* impl = tls_recycler.take_contiguous(sizes, n, nbytes, dtype, device)) {  // Note [Recycled tensors]
    return Tensor(IntrusivePtr<TensorImpl>::adopt_unowned(impl));
  }
  auto storage = Storage::make(nbytes, device);
  return Tensor(IntrusivePtr<TensorImpl>::make(std::move(storage), sizes, TensorImpl::Contiguous{n}, dtype, device));
}

Tensor make_like_geometry(const TensorImpl& like, size_t nbytes, Device storage_device) {
  if (TensorImpl* impl = tls_recycler.take_like(like, nbytes, storage_device)) {  // Note [Recycled tensors]
    return Tensor(IntrusivePtr<TensorImpl>::adopt_unowned(impl));
  }
  auto storage = Storage::make(nbytes, storage_device);
  return Tensor(IntrusivePtr<TensorImpl>::make(std::move(storage), like, TensorImpl::SameGeometry{}));
}

Tensor make_strided(IntArrayRef sizes, IntArrayRef strides, DType dtype, Device device) {
  OPSPEC_CHECK(sizes.size() == strides.size(), "empty_strided: sizes ", format_sizes(sizes), " and strides ",
               format_sizes(strides), " have different lengths");
  checked_span(sizes, dtype, "empty_strided");  // See Note [Checked sizes]
  int64_t extent = 1;  // elements needed: 1 + sum((size-1)*stride)
  bool empty = false, overflow = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    OPSPEC_CHECK(strides[d] >= 0, "empty_strided: negative stride ", strides[d]);
    if (sizes[d] == 0) empty = true;
    int64_t step = 0;
    overflow |= __builtin_mul_overflow(std::max<int64_t>(sizes[d] - 1, 0), strides[d], &step);
    overflow |= __builtin_add_overflow(extent, step, &extent);
  }
  if (empty) extent = 0;
  int64_t nbytes = 0;
  overflow |= __builtin_mul_overflow(extent, static_cast<int64_t>(element_size(dtype)), &nbytes);
  OPSPEC_CHECK(!overflow, "empty_strided: sizes ", format_sizes(sizes), " with strides ", format_sizes(strides),
               " need more than 2^63 - 1 bytes of ", dtype_torch_name(dtype), " storage");
  auto storage = Storage::make(static_cast<size_t>(nbytes), device);
  return Tensor(IntrusivePtr<TensorImpl>::make(std::move(storage), sizes, strides, 0, dtype, device));
}

Tensor make_tensor_with_strides(IntArrayRef sizes, IntArrayRef strides, DType dtype, Device device) {
  // Exactly row-major only: a size-1 dim's odd stride is kept, as empty_strided keeps it.
  if (strides.empty()) return make_tensor(sizes, dtype, device);  // empty: row-major
  if (strides.size() == sizes.size()) {
    int64_t expected = 1;
    bool row_major = true;
    for (size_t d = sizes.size(); d-- > 0;) {
      row_major &= strides[d] == expected;
      expected *= std::max<int64_t>(sizes[d], 1);
    }
    if (row_major) return make_tensor(sizes, dtype, device);
  }
  return make_strided(sizes, strides, dtype, device);
}

Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) {
  auto impl = IntrusivePtr<TensorImpl>::make(base.impl()->storage(), sizes, strides, storage_offset,
                                             base.dtype(), base.device());
  if (base.impl()->subclass()) impl->set_subclass(base.impl()->subclass());
  // Views of fake tensors stay fake (see runtime/fake/fake_tensor.h).
  if (base.key_set().has(DispatchKey::kFake)) impl->set_backend_key(DispatchKey::kFake);
  return Tensor(std::move(impl));
}

Tensor make_alias_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset,
                       bool multi_output) {
  Tensor view = make_view(base, sizes, strides, storage_offset);
  // See Note [Every view is marked].
  const CreationMeta made = !autograd::is_grad_enabled() ? CreationMeta::kNoGradMode
                            : multi_output                 ? CreationMeta::kMultiOutputNode
                                                           : CreationMeta::kDefault;
  const TensorImpl* b = base.impl();
  if (b->view_base() != nullptr) {
    view.impl()->set_view_base(IntrusivePtr<TensorImpl>(b->view_base()), propagate_creation_meta(b->view_creation(), made));
  } else {
    view.impl()->set_view_base(IntrusivePtr<TensorImpl>(base.impl()), made);
  }
  return view;
}

Tensor make_wrapped_number(const Scalar& s) {
  Tensor t = make_tensor({}, s.dtype(), kCPU);
  switch (s.kind()) {
    case Scalar::Kind::kDouble: *static_cast<double*>(t.raw_data()) = s.to_double(); break;
    case Scalar::Kind::kInt: *static_cast<int64_t*>(t.raw_data()) = s.to_int(); break;
    case Scalar::Kind::kBool: *static_cast<bool*>(t.raw_data()) = s.to_bool(); break;
  }
  t.impl()->set_wrapped_number(true);
  return t;
}

Scalar read_scalar(const Tensor& t) {
  OPSPEC_INTERNAL_ASSERT(t.numel() == 1 && t.impl()->storage()->device().is_cpu());
  // One element: its address is the storage offset whatever the strides.
  return OPSPEC_DISPATCH_ALL_DTYPES(t.dtype(), "read_scalar", [&]() -> Scalar {
    const scalar_t v = *static_cast<const scalar_t*>(t.raw_data());
    if constexpr (std::is_same_v<scalar_t, bool>) {
      return Scalar(v);
    } else if constexpr (std::is_integral_v<scalar_t>) {
      return Scalar(static_cast<int64_t>(v));
    } else if constexpr (std::is_same_v<scalar_t, double>) {
      return Scalar(v);
    } else {
      return Scalar(static_cast<double>(static_cast<float>(v)));
    }
  });
}

double read_element_as_double(const Tensor& t, int64_t linear_index) {
  int64_t off = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    const int64_t sz = t.sizes()[d];
    off += (linear_index % sz) * t.strides()[d];
    linear_index /= sz;
  }
  return OPSPEC_DISPATCH_ALL_DTYPES(t.dtype(), "read_element", [&]() -> double {
    const scalar_t v = static_cast<const scalar_t*>(t.raw_data())[off];
    if constexpr (std::is_same_v<scalar_t, Half> || std::is_same_v<scalar_t, BFloat16>) {
      return static_cast<float>(v);
    } else {
      return static_cast<double>(v);
    }
  });
}

}  // namespace internal
}  // namespace opspec
