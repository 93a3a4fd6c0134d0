// fake_tensor.h: fake tensors (shape, strides, dtype and device, no data) and
// FakeTensorMode, which runs every op on its meta kernel. See Note [Fake tensors].
#pragma once

#include <memory>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "runtime/dispatch/mode.h"

namespace opspec {

// Note [Fake tensors]
// A fake tensor is a TensorImpl over meta storage (no bytes are allocated)
// that claims a real device (cpu, or cuda with no GPU present) and dispatches
// to the Fake key instead of its device's. Its kernel is one boxed fallback:
// compute the output device as a real run would (mixing devices raises the
// same "Expected all tensors to be on the same device" error), swap every fake
// argument for a meta tensor over the same storage, run the op's Meta kernel,
// and wrap the meta results back as fake tensors on that device. Results of
// in-place ops are the fake argument itself and views share its storage, so
// aliasing reads the same as in a real run. FakeTensorMode adds what a mode
// can see and a tensor cannot: factories (randn, zeros) return fake tensors,
// and real tensors passed in are converted, memoized so one real tensor always
// gives the same fake tensor (and one real storage the same fake storage).
// Composite ops decompose above the Python key, so fake mode sees their parts.

// is_fake: t is a fake tensor (not a meta tensor, not a real one).
inline bool is_fake(const Tensor& t) { return t.defined() && t.key_set().has(DispatchKey::kFake); }

// FakeTensorMode: inside it factories return fake tensors and every op runs its
// meta kernel; real tensor arguments are converted to fake ones (memoized).
// Use with ModeGuard: `FakeTensorMode fake; ModeGuard g(fake); ops::randn({1<<20, 1<<20});`.
// The mode keeps the real tensors it converted alive until it is destroyed or
// clear_memo() is called, so a memoized address is never reused.
class FakeTensorMode : public DispatchMode {
 public:
  FakeTensorMode() = default;
  ~FakeTensorMode() override;

  bool dispatch(OpCall& call) override;
  ModeKind kind() const override { return ModeKind::kFake; }
  std::string_view name() const override { return "FakeTensorMode"; }

  // from_real: the fake tensor for t: t itself if fake or meta; otherwise a
  // fake tensor with t's sizes, strides, offset, dtype and device (a leaf
  // that requires grad when t requires grad), memoized.
  Tensor from_real(const Tensor& t);
  // memo_size: how many real tensors have been converted and remembered.
  size_t memo_size() const { return tensors_.size(); }
  // clear_memo: forgets every conversion (later conversions make new fakes).
  void clear_memo();

 private:
  struct StorageEntry {
    Storage real;  // kept alive so its address is not reused while memoized
    Storage fake;
  };
  absl::flat_hash_map<uint64_t, Tensor> tensors_;  // real TensorImpl uid -> fake
  absl::flat_hash_map<const StorageImpl*, StorageEntry> storages_;
};

namespace internal {
// make_fake: a fake tensor over fresh meta storage (no data) with this geometry.
Tensor make_fake(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset, DType dtype, Device device);
// make_fake_like: a fake tensor over fresh meta storage with fake tensor
// like's geometry, dtype and device: what make_fake would make for them, with
// nothing recomputed (replay makes one per op; Note [Replaying a capture]).
Tensor make_fake_like(const Tensor& like);
// run_fake_kernel: runs op on the stack's fake (and meta) tensors through its
// Meta kernel; the stack then holds fake results. Real arguments other than
// 0-dim cpu scalars raise. See Note [Fake tensors].
void run_fake_kernel(const OperatorHandle& op, Stack& stack);
// register_fake_fallback: the Fake key's fallback (run_fake_kernel).
void register_fake_fallback(Dispatcher& d);
}  // namespace internal

}  // namespace opspec
