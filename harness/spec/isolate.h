// isolate.h: running cases in worker processes (the default of opspec run),
// so a crash or a hang fails that case only. See Note [Isolation].
#pragma once

#include <functional>
#include <vector>

#include "harness/spec/runner.h"

namespace opspec::spec {

// Note [Isolation]
// `opspec run` runs cases in `jobs` long-lived worker processes, forked once
// each after the suites are loaded. The parent keeps two case indices in a
// worker's task pipe, so the worker starts the next case while the parent
// reads the last result (with one at a time, each worker sat idle through
// every round trip and -j2 was no faster than -j1); the worker sends each
// CaseResult back as length-framed JSON, and its stdout and stderr go to a
// third pipe whose tail is kept for the case's report. The parent sleeps in
// poll() until a result, output, a worker's exit (its pipes close) or the
// nearest per-case deadline, so it never polls on a timer. A worker that dies
// (a signal, an exit without a result) fails the case it was running with
// that reason and the output tail, its queued case goes back to the pending
// ones, and a new worker takes its place; a case past its timeout has its
// worker SIGKILLed the same way. Workers run in their own process groups (a
// terminal's ^C reaches the parent only) and die with the parent
// (PR_SET_PDEATHSIG). On SIGINT or SIGTERM the parent kills every worker,
// fails the running cases and marks the pending ones skipped ("interrupted"),
// and returns, so the caller still writes its reports and exits 128 + signal.
// `fresh_process` (--isolate) gives every case a new worker, for cases that
// must not see each other's process state (compile caches, the generator,
// disallow_in_graph); a finished worker is reaped later, so the next one is
// forked without waiting for the last to tear down. --in-process (no
// workers) is for debugging.
// What a fork costs is the pages the child then writes, each copied on a
// fault (13 us on the development VM). So the CLI parses the suites on
// helper threads, whose malloc arenas keep yaml-cpp's garbage out of the
// main thread's free lists that every worker would otherwise walk and copy,
// binds the executable's symbols at start-up (-z now) rather than in each
// worker, and gives each of N workers cores/N intra-op threads (See Note
// [Intra-op threads]). With the kernels' own fixes (no OpenMP region for
// small work, no OpenBLAS pool) these took --isolate from 11 ms to 7 ms a
// case on the development VM and made -j2 faster than -j1 on its two cores.
// The stock command then re-executes itself with LD_BIND_NOW=1 under
// --isolate (bind_symbols_before_isolating in harness/cli/cli.h): a symbol
// bound lazily in a case's process searched all 47 shared libraries' hash
// tables there, every time; that took --isolate to 6.6 ms a case. What is
// left is the VM's: it is a PVM guest (shadow page tables), where a bare C
// program's fork+exit+wait costs 0.9 ms, opspec's 1.7 ms, and a case's first
// run in a new address space 3-4 ms against 0.3 ms in a warm one, spread over
// first touches of pages rather than any one function. Measured and dropped:
// forking the next worker while a case runs, a warm-up case in the parent,
// and MADV_POPULATE_READ of the code (none faster; the guest serialises the
// page-table work of concurrent processes).

// PoolOptions: how many workers, the per-case timeout (0 = none), and whether
// each case gets a fresh worker.
struct PoolOptions {
  int jobs = 1;
  double timeout_seconds = 0;
  bool fresh_process = false;
  // on_tick: when set, called in the parent at least twice a second while
  // cases run, with the id of the case that has run longest and its seconds
  // so far (for a progress line).
  std::function<void(const std::string& slowest_id, double seconds)> on_tick;
};

// PoolRun: every case's result, in case order, and the signal that
// interrupted the run (0 if none).
struct PoolRun {
  std::vector<CaseResult> results;
  int interrupted_by = 0;
};

// run_isolated: runs cases in worker processes; on_done is called in the
// parent, in completion order, for each result (interrupted cases included).
PoolRun run_isolated(const std::vector<CaseRef>& cases, const RunOptions& run_options, const PoolOptions& pool,
                     const std::function<void(const CaseResult&)>& on_done);

}  // namespace opspec::spec
