// isolate.h: running cases in child processes (opspec run --isolate, and
// --jobs N), so a crash or a hang fails that case only. See Note [Isolation].
#pragma once

#include <functional>
#include <vector>

#include "harness/spec/runner.h"

namespace opspec::spec {

// Note [Isolation]
// Each case runs in a fork()ed child that sends its CaseResult back as JSON
// over a pipe; its stdout and stderr go to a second pipe, whose tail is kept
// for the report. A child that dies by a signal, exits without a result, or
// outlives the per-case timeout (then SIGKILLed) fails its case with that
// reason and the output tail. At most `jobs` children run at once. The
// runtime's global state (generator, disallow_in_graph, compile caches)
// is per process, which is also why parallel cases always use processes.

// PoolOptions: how many children at once, and the per-case timeout (0 = none).
struct PoolOptions {
  int jobs = 1;
  double timeout_seconds = 0;
};

// run_isolated: runs cases in child processes; on_done is called in the
// parent, in completion order, for each result. Returns results in case order.
std::vector<CaseResult> run_isolated(const std::vector<CaseRef>& cases, const RunOptions& run_options,
                                     const PoolOptions& pool, const std::function<void(const CaseResult&)>& on_done);

}  // namespace opspec::spec
