// parallel.h: how many threads one op may use on the CPU, as torch.set_num_threads.
#pragma once

#include <optional>

#include "runtime/core/live_guards.h"

namespace opspec {

// Note [Intra-op threads]
// CPU kernels split large ops over one pool of OpenMP threads: elementwise
// loops, reductions, random fills, and matrix products, which opspec cuts
// into row blocks itself (See Note [One thread pool for products] in
// kernels/cpu/blas.cc). The pool defaults to one thread per core (or
// OMP_NUM_THREADS). Several processes each using every core oversubscribe
// them, so `opspec run -j N` gives each of its N workers cores/N threads (at
// least 1), as pytest-xdist users do with torch.set_num_threads. Results never
// depend on the count (See Note [parallel_for chunks]).

// set_num_threads: limits the threads one op may use to n (>= 1; throws
// otherwise), for every thread of the process, as torch.set_num_threads.
void set_num_threads(int n);

// get_num_threads: the limit set_num_threads set, else OpenMP's default
// (OMP_NUM_THREADS, else the number of cores); 1 without OpenMP.
int get_num_threads();

// NumThreadsGuard: set_num_threads(n) for its scope; the previous setting
// (including "never set": OpenMP's default) comes back when it ends. Guards
// (of any thread: the setting is the process's) may end in any order: one
// that ends while a guard entered after it is alive leaves the setting to
// that guard (See Note [Out-of-order guard release] in live_guards.h).
class NumThreadsGuard {
 public:
  explicit NumThreadsGuard(int n);
  ~NumThreadsGuard();
  NumThreadsGuard(const NumThreadsGuard&) = delete;
  NumThreadsGuard& operator=(const NumThreadsGuard&) = delete;

 private:
  int saved_limit_ = 0;  // 0: never set
  std::optional<internal::LiveLink<NumThreadsGuard>> link_;  // linked under the guards' lock
};

}  // namespace opspec
