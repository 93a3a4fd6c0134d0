// copy_slices.h: in-place changes to views under autograd: CopySlices and the
// regenerated grad_fn of a view. See Note [In-place changes to views].
#pragma once

#include <mutex>

#include <memory>

#include "runtime/autograd/autograd_meta.h"
#include "runtime/autograd/node.h"
#include "runtime/core/tensor.h"

namespace opspec::autograd {

// Note [In-place changes to views]
// A view recorded by autograd (a view op of a tensor that requires grad, whose
// schema aliases: Tensor(a)) remembers its root base and its storage's version
// (AutogradMeta::view_base, view_version), as PyTorch's DifferentiableViewMeta.
// - An in-place op on such a view (rebase_view_history) records its node fn as
//   usual, then gives the base a CopySlices node: in backward it copies the
//   base's gradient into a fresh tensor of the base's geometry, hands fn the
//   view's region of it (as_strided, cloned contiguous), writes fn's gradient
//   for the old view back into that region, and passes the rest of fn's
//   gradients on. The base's history is the CopySlices node from then on.
// - A view whose storage version moved since its grad_fn was made (an in-place
//   op on it, on its base, or on another view of the base) gets a new grad_fn
//   when next read (refresh_view): an AsStridedBackward0 of the base's current
//   history with the view's geometry. One of the views of a multi-output view
//   op (split's) refuses instead, in PyTorch's words.
// A view taken under no_grad of a tensor that requires grad is recorded too,
// without history, and refuses in-place changes (See Note [Views that refuse
// in-place changes]). Other views of tensors that do not require grad are not
// recorded (plain tensors skip the Autograd key), but a view op's kernel
// remembers the root base (TensorImpl::view_base), so an in-place op on such a
// view with an input that requires grad (`buf[:, :k].copy_(x)`) adopts it first
// (adopt_view) and takes the same path (unless its kernel marked it as a view
// that refuses the change: See Note [Views that refuse in-place changes]). Such a view also carries its base's
// Autograd key (TensorImpl::dispatch_keys), so once its base has changed since
// the view was made (TensorImpl::view_version) and requires grad, the next op
// reading it adopts it with the base's region as grad_fn, as PyTorch
// regenerates every view's (`v = b[:2]; b.copy_(x); v.sum()` reaches x). Unlike
// PyTorch, a view of an unchanged base that requires grad (a leaf marked after
// the view was taken) stays out of the graph: PyTorch says it requires grad but
// sends its gradient nowhere, as opspec does for a view taken under no_grad.
// An in-place view op on a view (squeeze_) changes only its geometry: the
// view keeps its base and gets the op's node as grad_fn, with no CopySlices.
// As in PyTorch (1.13 checked), an in-place op on a view whose formula saves
// another view of the same base (`b[0].mul_(b[1])`) makes a reference cycle
// (base, CopySlices, the op's node, the saved view, its base) that only a
// backward, which releases saved tensors, breaks.

// Note [Views that refuse in-place changes]
// Every view carries PyTorch's CreationMeta (runtime/core/tensor.h): one of a
// Tensor[] view op's outputs (kMultiOutputNode), or one made with grad mode
// off (kNoGradMode), and views of those keep the mark. Kernels set it
// (TensorImpl::view_creation, See Note [Every view is marked]), so a view of a
// plain tensor has it too, as PyTorch's ADInplaceOrView kernels mark every
// view; a view autograd records keeps it in its AutogradMeta (a no_grad view
// of a tensor that requires grad has no grad_fn, requires grad with its
// base, and sends its gradient nowhere), and one it adopts takes the kernel's.
// With grad mode on, an in-place op on such a view that autograd records (an
// input requires grad: check_in_place), or reading one whose base or another
// view of it changed in place since and requires grad (refresh_view), fails
// in PyTorch's words (handle_view_on_rebase): whether the change was meant to
// be tracked is ambiguous, so PyTorch forbids it. PyTorch checks this before
// a view's leaf base, so a no_grad view of a leaf gets this message, not the
// leaf's; a view without grad_fn (of a plain tensor) reads "A view was created
// in no_grad mode" even when split made it with grad mode on, as PyTorch's.

// handle_view_on_rebase: throws PyTorch's refusal for a recorded view m whose
// CreationMeta is not kDefault, changed in place (indirect: its base or
// another view of it was); nothing for a kDefault one.
void handle_view_on_rebase(const AutogradMeta& m, bool indirect);

// record_view: view, just made by a view op, becomes a recorded view of base
// (a root base), made as creation says.
void record_view(const Tensor& view, const Tensor& base, CreationMeta creation);

// rebase_view_history: view (a recorded view) was changed in place by the op
// whose node is fn (its output metadata recorded): its base's history becomes
// a CopySlices of fn, and view's grad_fn the base's region.
void rebase_view_history(const Tensor& view, const std::shared_ptr<Node>& fn);

// adopt_view: an in-place op's self that a view op made (TensorImpl::view_base)
// but autograd never recorded becomes a recorded view of its root base (with
// the base's region as grad_fn when the base requires grad).
void adopt_view(const Tensor& self);

// Note [View history lock]
// Reading a view's grad_fn can rewrite it (refresh_view), and reads are const:
// two threads reading one view's grad_fn (or requires_grad) raced on its
// history. As PyTorch's DifferentiableViewMeta::mutex_, a lock guards the
// check and the rewrite: one process-wide recursive mutex, taken only for
// views (a view's refresh reads its base's edge, which may be a view too, so
// per-view locks could be taken in opposite orders by two threads).

// ViewHistoryLock: holds the view history lock for a tensor that is a view;
// nothing otherwise. See Note [View history lock].
class ViewHistoryLock {
 public:
  explicit ViewHistoryLock(const Tensor& t);
  ViewHistoryLock(const ViewHistoryLock&) = delete;
  ViewHistoryLock& operator=(const ViewHistoryLock&) = delete;

 private:
  std::unique_lock<std::recursive_mutex> lock_;
};

// refresh_view: gives a recorded view whose storage changed since its grad_fn
// was made a new one, and adopts a view autograd never recorded whose base
// changed since and requires grad (See Note [In-place changes to views]);
// nothing otherwise. Takes the view's ViewHistoryLock: a caller that reads
// the history after should hold one around both.
void refresh_view(const Tensor& view);
// stale_view: whether refresh_view would give view a new grad_fn (it changes
// nothing: Tensor::requires_grad and is_leaf read it, as PyTorch's read a
// view's base without regenerating). Takes the view's ViewHistoryLock.
bool stale_view(const Tensor& view);

}  // namespace opspec::autograd
