// parallel.cc: See Note [Intra-op threads] in parallel.h.
#include "runtime/core/parallel.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#include <atomic>

#include "runtime/core/error.h"

namespace opspec {
namespace {

std::atomic<int> g_limit{0};  // 0: never set

}  // namespace

void set_num_threads(int n) {
  OPSPEC_CHECK(n >= 1, "set_num_threads: expected a positive number of threads, got ", n);
  g_limit = n;
#ifdef _OPENMP
  omp_set_num_threads(n);  // also regions that do not ask get_num_threads() (third-party code)
#endif
}

int get_num_threads() {
#ifdef _OPENMP
  const int n = g_limit.load(std::memory_order_relaxed);
  return n > 0 ? n : omp_get_max_threads();
#else
  return 1;
#endif
}

NumThreadsGuard::NumThreadsGuard(int n) : saved_limit_(g_limit.load()), saved_omp_(1) {
#ifdef _OPENMP
  saved_omp_ = omp_get_max_threads();
#endif
  set_num_threads(n);
}

NumThreadsGuard::~NumThreadsGuard() {
  g_limit = saved_limit_;
#ifdef _OPENMP
  omp_set_num_threads(saved_omp_);
#endif
}

}  // namespace opspec
