#include "runtime/dispatch/kernel_record.h"

#include <algorithm>

namespace opspec {
namespace {

std::vector<std::shared_ptr<KernelObserver>>& observers() {
  thread_local std::vector<std::shared_ptr<KernelObserver>> list;
  return list;
}

}  // namespace

KernelObserverGuard::KernelObserverGuard(std::shared_ptr<KernelObserver> observer) : observer_(std::move(observer)) {
  observers().push_back(observer_);
}

KernelObserverGuard::~KernelObserverGuard() {
  // Guards usually nest, but remove exactly this one wherever it is.
  auto& list = observers();
  if (auto it = std::find(list.rbegin(), list.rend(), observer_); it != list.rend()) list.erase(std::next(it).base());
}

namespace internal {

void KernelRecordToken::finish() {
  std::vector<std::function<void()>> done = std::move(done_);
  done_.clear();
  for (auto& f : done) {
    if (f) f();
  }
}

bool kernel_observed() { return !observers().empty(); }

KernelRecordToken record_kernel(std::string_view prefix, std::string_view name, const KernelArgs& kwargs) {
  KernelRecordToken token;
  // A copy: an observer may install or remove observers.
  const std::vector<std::shared_ptr<KernelObserver>> list = observers();
  for (const auto& observer : list) token.done_.push_back(observer->on_launch(prefix, name, kwargs));
  return token;
}

}  // namespace internal
}  // namespace opspec
