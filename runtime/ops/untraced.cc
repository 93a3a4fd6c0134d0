// untraced.cc: copy_untraced and clone_untraced over the CPU backend's copy.
#include "runtime/ops/untraced.h"

#include <atomic>

#include "runtime/dispatch/dispatcher.h"

namespace opspec {
namespace {

std::atomic<internal::CpuCopyFn> cpu_copy{nullptr};

}  // namespace

void copy_untraced(const Tensor& dst, const Tensor& src) {
  OPSPEC_CHECK(dst.defined() && src.defined(), "copy_untraced: undefined tensor");
  OPSPEC_CHECK(dst.device().is_cpu() && src.device().is_cpu() && dst.impl()->storage()->device().is_cpu() &&
                   src.impl()->storage()->device().is_cpu(),
               "copy_untraced: expected cpu tensors with data, got ", dst.meta_str(), " and ", src.meta_str());
  (void)Dispatcher::singleton();  // the CPU backend registers its copy as the dispatcher starts
  const internal::CpuCopyFn fn = cpu_copy.load(std::memory_order_acquire);
  OPSPEC_INTERNAL_ASSERT(fn != nullptr);
  fn(dst, src);
}

Tensor clone_untraced(const Tensor& t) {
  if (!t.defined()) return t;
  Tensor c = internal::make_strided(t.sizes(), t.strides(), t.dtype(), t.device());
  copy_untraced(c, t);
  c.impl()->set_dim_marks(t.impl()->dynamic_dims(), t.impl()->static_dims());
  return c;
}

namespace internal {

void register_cpu_copy(CpuCopyFn fn) { cpu_copy.store(fn, std::memory_order_release); }

}  // namespace internal
}  // namespace opspec
