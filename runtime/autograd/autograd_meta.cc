// autograd_meta.cc: See Note [Autograd meta] in autograd_meta.h.
#include "runtime/autograd/autograd_meta.h"

#include "runtime/autograd/accumulate_grad.h"
#include "runtime/autograd/copy_slices.h"

namespace opspec::autograd {

AutogradMeta& materialize_meta(const Tensor& t) {
  OPSPEC_CHECK(t.defined(), "autograd: the tensor is undefined");
  if (AutogradMeta* m = meta_of(t)) return *m;
  auto meta = std::make_unique<AutogradMeta>();
  AutogradMeta& ref = *meta;
  t.impl()->set_autograd_meta(std::move(meta));
  return ref;
}

AutogradMeta::~AutogradMeta() {
  if (grad_accumulator != nullptr) grad_accumulator->release();
}

bool AutogradMeta::adopt_dying(TensorImpl* impl) noexcept {
  // Only this meta holds the accumulator: no graph or caller can reach the leaf, which dies.
  if (grad_accumulator == nullptr || grad_accumulator.use_count() == 1) return false;
  std::shared_ptr<AccumulateGrad> acc = std::move(grad_accumulator);
  may_adopt = false;
  adopted_by = acc;
  acc->adopt(IntrusivePtr<TensorImpl>::adopt_unowned(impl));
  // If the graphs died meanwhile, acc's release frees impl and this meta: neither is touched after.
  return true;
}

namespace {

// accumulator_of: m's (leaf t's) AccumulateGrad, made on first use.
const std::shared_ptr<AccumulateGrad>& accumulator_of(AutogradMeta& m, const Tensor& t) {
  if (m.grad_accumulator == nullptr) {
    // A handle to an adopted leaf takes its accumulator back (See Note [Graphs keep their leaves]).
    if (std::shared_ptr<AccumulateGrad> acc = m.adopted_by.lock()) {
      m.adopted_by.reset();
      acc->adopt({});  // t still holds the leaf: only the count drops
      m.grad_accumulator = std::move(acc);
      m.may_adopt = true;
    }
  }
  // A leaf reshaped in place under no_grad gets a new one; the old one is
  // detached, so graphs recorded before no longer accumulate into the leaf.
  if (m.grad_accumulator == nullptr || !m.grad_accumulator->matches(t)) {
    if (m.grad_accumulator != nullptr) m.grad_accumulator->release();
    m.grad_accumulator = std::allocate_shared<AccumulateGrad>(::opspec::internal::PoolAllocator<AccumulateGrad>(), t);
    m.may_adopt = true;
  }
  return m.grad_accumulator;
}

}  // namespace

std::shared_ptr<Node> grad_accumulator(const Tensor& t) { return accumulator_of(materialize_meta(t), t); }

Edge gradient_edge(const Tensor& t) {
  ViewHistoryLock lock(t);  // See Note [View history lock]
  AutogradMeta* m = meta_of(t);
  if (m != nullptr && m->view_base.defined()) refresh_view(t);  // only views may need a new grad_fn
  if (m != nullptr && m->grad_fn) return {m->grad_fn, m->output_nr};
  if (m != nullptr && m->view_base.defined() && !m->requires_grad) return {};  // a view taken under no_grad
  return {accumulator_of(m != nullptr ? *m : materialize_meta(t), t), 0};
}

void move_retained_grad(const AutogradMeta& m, Node* old_fn, Node& new_fn) {
  if (!m.retains_grad || old_fn == &new_fn) return;
  if (old_fn != nullptr) {
    auto& slots = old_fn->retain_grad_slots();
    std::erase_if(slots, [&](const auto& slot) { return slot.second.lock() == m.retained_grad; });
  }
  new_fn.retain_grad_slots().push_back({m.output_nr, m.retained_grad});
}

void set_history(const Tensor& t, const std::shared_ptr<Node>& fn) { set_history(t, std::shared_ptr<Node>(fn)); }

void set_history(const Tensor& t, std::shared_ptr<Node>&& fn) {
  AutogradMeta& m = materialize_meta(t);
  const std::shared_ptr<Node> old_fn = std::move(m.grad_fn);
  m.output_nr = fn->add_input_metadata(t);
  m.grad_fn = std::move(fn);
  t.impl()->set_autograd_key(true);
  move_retained_grad(m, old_fn.get(), *m.grad_fn);  // See Note [Retained gradients follow the tensor]
}

void share_history(const Tensor& from, const Tensor& to) {
  const AutogradMeta* f = meta_of(from);
  if (f == nullptr || f->grad_fn == nullptr) return;
  AutogradMeta& m = materialize_meta(to);
  const std::shared_ptr<Node> old_fn = std::move(m.grad_fn);
  m.grad_fn = f->grad_fn;
  m.output_nr = f->output_nr;
  to.impl()->set_autograd_key(true);
  move_retained_grad(m, old_fn.get(), *m.grad_fn);
}

}  // namespace opspec::autograd
