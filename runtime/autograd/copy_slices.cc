// copy_slices.cc: See Note [In-place changes to views] in copy_slices.h.
#include "runtime/autograd/copy_slices.h"

#include <string>
#include <utility>
#include <vector>

#include "runtime/autograd/autograd_meta.h"
#include "runtime/autograd/internal/formula_helpers.h"
#include "runtime/ops/ops.h"

namespace opspec::autograd {

namespace {

// Geometry: sizes, strides and storage offset (PyTorch's TensorGeometry).
struct Geometry {
  explicit Geometry(const Tensor& t)
      : sizes(t.sizes().begin(), t.sizes().end()), strides(t.strides().begin(), t.strides().end()),
        offset(t.storage_offset()) {}
  std::vector<int64_t> sizes, strides;
  int64_t offset;
};

uint64_t storage_version(const Tensor& t) {
  const Storage& s = t.impl()->storage();
  return s ? s->version() : 0;
}

// CopySlices: the base's node after an in-place op on one of its views.
class CopySlices : public Node {
 public:
  CopySlices(const Tensor& base, const Tensor& view, std::shared_ptr<Node> fn)
      : base_(base), view_(view), fn_(std::move(fn)) {
    add_next_edge(requires_grad(base) ? gradient_edge(base) : Edge{});  // a plain buffer's: nowhere
    for (size_t i = 1; i < fn_->next_edges().size(); ++i) add_next_edge(fn_->next_edges()[i]);
  }
  std::string name() const override { return "CopySlices"; }

  VariableList apply(VariableList&& grads) override {
    VariableList out(next_edges().size());
    const Tensor& grad = grads[0];
    if (!grad.defined()) return out;
    Tensor result = ops::new_empty_strided(grad, base_.sizes, base_.strides);
    ops::copy_(result, grad);
    Tensor slice = ops::as_strided(result, view_.sizes, view_.strides, view_.offset - base_.offset);
    VariableList res = fn_->apply({ops::clone(slice, /*memory_format=*/int64_t{0})});
    for (size_t i = 0; i < res.size() && i < out.size(); ++i) {
      if (!should_compute_output(i)) continue;
      if (i == 0) {
        // No gradient for the old view counts as zeros (PyTorch's comment
        // says so, but its loop skips the base's gradient altogether then).
        res[0].defined() ? ops::copy_(slice, res[0]) : ops::zero_(slice);
        out[0] = result;
      } else {
        out[i] = std::move(res[i]);
      }
    }
    return out;
  }
  void release_variables() override { fn_->release_variables(); }

 private:
  Geometry base_, view_;
  std::shared_ptr<Node> fn_;
};

// ViewAsStrided: a view's regenerated grad_fn: PyTorch's AsStridedBackward0
// of the base with the view's geometry.
class ViewAsStrided : public Node {
 public:
  ViewAsStrided(const Tensor& base, const Tensor& view) : base_(base), view_(view) {
    add_next_edge(gradient_edge(base));
  }
  std::string name() const override { return "AsStridedBackward0"; }
  VariableList apply(VariableList&& grads) override {
    if (!grads[0].defined()) return {Tensor()};
    return {internal::as_strided_backward(grads[0], base_.sizes, base_.strides, base_.offset, view_.sizes,
                                          view_.strides, view_.offset)};
  }

 private:
  Geometry base_, view_;
};

// regenerate: view's grad_fn becomes its base's region (as of now).
void regenerate(const Tensor& view, AutogradMeta& m) {
  auto fn = std::make_shared<ViewAsStrided>(m.view_base, view);
  const std::shared_ptr<Node> old_fn = std::move(m.grad_fn);
  m.output_nr = fn->add_input_metadata(view);
  m.grad_fn = std::move(fn);
  m.view_version = storage_version(view);
  view.impl()->set_autograd_key(true);
  move_retained_grad(m, old_fn.get(), *m.grad_fn);  // See Note [Retained gradients follow the tensor]
}

// kNeverMade: an adopted view's view_version: its grad_fn is made when first
// read if its base requires grad.
constexpr uint64_t kNeverMade = ~uint64_t{0};

// See Note [View history lock].
std::recursive_mutex g_view_history_mu;

}  // namespace

ViewHistoryLock::ViewHistoryLock(const Tensor& t) {
  if (t.defined() && t.impl()->view_base() != nullptr) lock_ = std::unique_lock(g_view_history_mu);
}

void handle_view_on_rebase(const AutogradMeta& m, bool indirect) {
  if (m.creation_meta == CreationMeta::kDefault) return;
  const Node* fn = m.grad_fn.get();
  const std::string_view modified = indirect ? "its base or another view of its base has been" : "is being";
  std::string msg;
  if (m.creation_meta == CreationMeta::kNoGradMode || fn == nullptr) {
    // Without a grad_fn the view was made under no_grad, whatever its mark says (PyTorch's reasoning).
    msg = fn != nullptr
              ? str_cat("Output ", m.output_nr, " of ", fn->name(), " is a view of a view which was created in")
              : std::string("A view was created in");
    msg = str_cat(msg, " no_grad mode and ", modified, " modified inplace with grad mode enabled.");
  } else {
    msg = str_cat("Output ", m.output_nr, " of ", fn->name(), " is a view and ", modified, " modified inplace.");
  }
  if (m.creation_meta == CreationMeta::kMultiOutputNode) {
    msg += " This view is the output of a function that returns multiple views. Such functions do not allow the "
           "output views to be modified inplace. You should replace the inplace operation by an out-of-place one.";
  } else {
    msg += " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
           "moving both the view and the inplace either both inside the no_grad block (if you don't want the "
           "inplace to be tracked) or both outside (if you want the inplace to be tracked).";
  }
  throw Error(msg);
}

void record_view(const Tensor& view, const Tensor& base, CreationMeta creation) {
  AutogradMeta& m = materialize_meta(view);
  m.view_base = base;
  m.view_version = storage_version(view);
  m.creation_meta = creation;
}

void rebase_view_history(const Tensor& view, const std::shared_ptr<Node>& fn) {
  AutogradMeta& m = *static_cast<AutogradMeta*>(view.impl()->autograd_meta());
  const Tensor base = m.view_base;
  set_history(base, std::make_shared<CopySlices>(base, view, fn));
  regenerate(view, m);
}

void adopt_view(const Tensor& self) {
  TensorImpl* root = self.impl()->view_base();
  if (root == nullptr) return;
  if (const AutogradMeta* m = meta_of(self); m != nullptr && m->view_base.defined()) return;
  AutogradMeta& m = materialize_meta(self);
  m.view_base = Tensor(IntrusivePtr<TensorImpl>(root));
  m.view_version = kNeverMade;
  // An integer view is no view for autograd (torch 1.13: `copy_` of a tensor that
  // requires grad into a no_grad slice of an i64 tensor runs), so it refuses nothing.
  m.creation_meta = is_floating(self.dtype()) ? self.impl()->view_creation() : CreationMeta::kDefault;
  // A view that refuses in-place changes gets no history here: an in-place op
  // on it is refused (check_in_place), and so is reading it once its base has
  // changed (refresh_view). See Note [Views that refuse in-place changes].
  if (m.creation_meta == CreationMeta::kDefault) refresh_view(self);
}

bool stale_view(const Tensor& view) {
  if (!view.defined()) return false;
  ViewHistoryLock lock(view);
  const AutogradMeta* m = meta_of(view);
  if (m == nullptr || !m->view_base.defined()) {
    // A view autograd never recorded is tracked once its base has changed
    // since the view was made and requires grad now (PyTorch regenerates
    // every view's grad_fn so; a view of a leaf marked later stays untracked).
    const TensorImpl* root = view.impl()->view_base();
    if (root == nullptr || view.impl()->view_version() == storage_version(view)) return false;
    const auto* b = static_cast<const AutogradMeta*>(root->autograd_meta());
    return b != nullptr && (b->requires_grad || b->grad_fn != nullptr);
  }
  if (m->view_version == storage_version(view)) return false;
  // PyTorch's VariableHooks::grad_fn: a view without history of a base without any stays so.
  return m->grad_fn != nullptr || requires_grad(m->view_base);
}

void refresh_view(const Tensor& view) {
  ViewHistoryLock lock(view);
  if (!stale_view(view)) return;
  AutogradMeta* m = meta_of(view);
  if (m == nullptr || !m->view_base.defined()) {
    adopt_view(view);
    m = meta_of(view);
    if (m->creation_meta == CreationMeta::kDefault) return;  // adopt_view regenerated it
  }
  handle_view_on_rebase(*m, /*indirect=*/true);  // See Note [Views that refuse in-place changes]
  regenerate(view, *m);
}

}  // namespace opspec::autograd
