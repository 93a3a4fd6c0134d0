// kernel_record.h: reports of kernels launched outside the dispatcher (fused
// CPU kernels), so recorders such as the harness's DebugMode can log them
// without the runtime depending on the harness. See Note [Kernel records].
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/dispatch/value.h"

namespace opspec {

// Note [Kernel records]
// A fused kernel is not an op: no dispatch mode sees it. Whoever launches one
// calls internal::record_kernel(prefix, name, kwargs) before the launch and
// finish() on the returned token after it; every KernelObserver installed on
// the calling thread gets both events. Observers are thread-local because
// recorders are (DebugMode logs the ops of the thread that entered it), and
// with none installed record_kernel does nothing but return an empty token,
// so callers may check kernel_observed() first to skip building kwargs.

// KernelArgs: a kernel's named arguments ("in0", "out0", "n"), rendered by
// recorders as keyword arguments.
using KernelArgs = std::vector<std::pair<std::string, Value>>;

// KernelObserver: told about each kernel launch on the thread it is installed on.
class KernelObserver {
 public:
  virtual ~KernelObserver() = default;
  // on_launch: called before the launch; the returned callback (may be empty)
  // runs after it, e.g. to hash the outputs.
  virtual std::function<void()> on_launch(std::string_view prefix, std::string_view name,
                                          const KernelArgs& kwargs) = 0;
};

// KernelObserverGuard: installs an observer on this thread for the guard's
// lifetime (observers are called in installation order).
class KernelObserverGuard {
 public:
  explicit KernelObserverGuard(std::shared_ptr<KernelObserver> observer);
  ~KernelObserverGuard();
  KernelObserverGuard(const KernelObserverGuard&) = delete;
  KernelObserverGuard& operator=(const KernelObserverGuard&) = delete;

 private:
  std::shared_ptr<KernelObserver> observer_;
};

namespace internal {

// KernelRecordToken: the pending post-launch callbacks of one kernel record.
class KernelRecordToken {
 public:
  KernelRecordToken() = default;
  // finish: call once after the kernel ran (later calls do nothing).
  void finish();

 private:
  friend KernelRecordToken record_kernel(std::string_view, std::string_view, const KernelArgs&);
  std::vector<std::function<void()>> done_;
};

// kernel_observed: whether any observer is installed on this thread.
bool kernel_observed();

// record_kernel: reports a launch of kernel `name` (prefix: "fused", ...) to
// this thread's observers. See Note [Kernel records].
KernelRecordToken record_kernel(std::string_view prefix, std::string_view name, const KernelArgs& kwargs);

}  // namespace internal
}  // namespace opspec
