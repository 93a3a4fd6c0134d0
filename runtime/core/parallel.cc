// parallel.cc: See Note [Intra-op threads] in parallel.h.
#include "runtime/core/parallel.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#include <atomic>
#include <mutex>

#include "runtime/core/error.h"

namespace opspec {
namespace {

std::atomic<int> g_limit{0};  // 0: never set
#ifdef _OPENMP
std::atomic<int> g_omp_default{0};  // omp_get_max_threads() before the first set_num_threads; 0: not read yet
#endif

// The live NumThreadsGuards of the process (the limit is process state), under g_guards_mu.
std::mutex g_guards_mu;
internal::LiveLink<NumThreadsGuard>* g_innermost_guard = nullptr;

// set_limit: the limit, or (0) OpenMP's default again.
void set_limit(int n) {
#ifdef _OPENMP
  if (g_omp_default.load() == 0) {
    int unset = 0;
    g_omp_default.compare_exchange_strong(unset, omp_get_max_threads());
  }
  omp_set_num_threads(n > 0 ? n : g_omp_default.load());  // also regions that do not ask get_num_threads()
#endif
  g_limit = n;
}

}  // namespace

void set_num_threads(int n) {
  OPSPEC_CHECK(n >= 1, "set_num_threads: expected a positive number of threads, got ", n);
  set_limit(n);
}

int get_num_threads() {
#ifdef _OPENMP
  const int n = g_limit.load(std::memory_order_relaxed);
  if (n > 0) return n;
  // OpenMP's setting is per thread, and a guard may have ended on another one:
  // "never set" is the default read before the first set, where there was one.
  const int d = g_omp_default.load(std::memory_order_relaxed);
  return d > 0 ? d : omp_get_max_threads();
#else
  return 1;
#endif
}

NumThreadsGuard::NumThreadsGuard(int n) {
  OPSPEC_CHECK(n >= 1, "NumThreadsGuard: expected a positive number of threads, got ", n);
  std::lock_guard<std::mutex> lock(g_guards_mu);
  saved_limit_ = g_limit.load();
  link_.emplace(this, g_innermost_guard);
  set_limit(n);
}

NumThreadsGuard::~NumThreadsGuard() {
  std::lock_guard<std::mutex> lock(g_guards_mu);
  if (NumThreadsGuard* inner = link_->inner(); inner == nullptr) {
    set_limit(saved_limit_);
  } else {
    inner->saved_limit_ = saved_limit_;  // See Note [Out-of-order guard release]
  }
  link_.reset();
}

}  // namespace opspec
