// runner.h: running spec cases: one case (eager, then compiled) and its
// expectations, producing a CaseResult. See Note [Running a case].
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/spec/spec.h"

namespace opspec::spec {

// Note [Running a case]
// A case runs in this order, each step only when the case needs it:
//  1. skip_if and devices decide whether it runs at all (skipped: why).
//  2. A case-level load error (bad program, unknown op) fails it, unless
//     expect.error matches the error text.
//  3. The generator is seeded with the case's seed, the inputs are created
//     (in the order written, then laid out in their memory_format), then the
//     program is instantiated (fixtures create their parameters here), so the
//     same seed gives the same values.
//  4. Eager run under a DebugMode and op recorders: ops, ops_contain,
//     ops_exclude and function_ops are checked against it, after the ops
//     that match expect.ignore_ops are taken out; outputs and strides too.
//  5. Compiled run, when the case has `compile:` or expects graphs, graph
//     breaks, recompiles or fused kernels: the first call with the inputs,
//     then one call per entry of compile.calls; with expect.strides, each
//     call's outputs against eager's strides on the same inputs.
//  6. `check:` and `debug_string:` read the compiled run's debug string when
//     the case compiles, else the eager one; `check_graphs:` the printed graphs.
//  7. `equivalent:` runs eager and compiled again on fresh copies of the inputs,
//     with hashes, and compares outputs (see harness/expect/equivalence.h).
//  8. `gradcheck:` runs the program on f64 copies of fresh inputs and compares
//     its backward with finite differences (see harness/expect/gradcheck.h).
// The first error thrown by any step ends the case: with expect.error it must
// match (an RE2 search, See Note [Regexes]), otherwise the case fails with it. Every failed
// expectation is reported, not just the first. xfail inverts the outcome.

// Outcome: what happened to one case.
enum class Outcome : uint8_t { kPassed, kFailed, kSkipped, kXfailed };
// outcome_name: "passed", "failed", "skipped", "xfailed".
std::string_view outcome_name(Outcome o);

// CaseRef: one runnable case: a case of a suite on one device.
struct CaseRef {
  const SuiteSpec* suite = nullptr;
  const CaseSpec* spec = nullptr;
  std::string device = "cpu";
  // id: "suite::case", or "suite::case@cuda" for devices other than the first.
  std::string id() const;
};

// expand_cases: every (case, device) of the suites, in file order. The refs
// point into the suites, which must outlive them.
std::vector<CaseRef> expand_cases(const std::vector<SuiteSpec>& suites);
std::vector<CaseRef> expand_cases(const SuiteSpec& suite);

// CaseResult: a case's outcome, its message, and what `opspec show` prints.
struct CaseResult {
  std::string id;
  std::string suite;
  std::string name;
  std::string file;
  int line = 0;
  Outcome outcome = Outcome::kPassed;
  std::string message;       // failure text, skip reason, or xfail reason
  std::string error;         // the error the case raised, if any (expected or not)
  double seconds = 0;
  // Observations (filled as far as the case got).
  std::string eager_debug_string;
  std::string compiled_debug_string;
  std::vector<std::string> graphs;
  std::vector<std::string> graph_dots;     // the same graphs in Graphviz DOT, for --report
  std::vector<std::string> graph_breaks;   // "reason (at site)"
  std::vector<std::string> fused_kernels;  // kernel names launched by the first compiled call
  std::string guards;                      // each graph's guards, the recompile reasons (check_guards' text)
  std::string report_eager_log;            // with RunOptions::report_logs: the eager log with ids, hashes, modules
  std::vector<std::string> kernel_programs;  // the fused kernels' programs (CompileObservation::kernel_programs)
  // A failed `equivalent:`: both runs' logs, one rendered entry each (with
  // hashes), and the entry where they first diverge (-1: they did not).
  std::vector<std::string> equivalence_eager, equivalence_compiled;
  int equivalence_divergence = -1;
  // accepted_debug_string: with RunOptions::accept, the new golden text to
  // write when the case's debug_string differs (the case then passes).
  std::optional<std::string> accepted_debug_string;
};

// case_result: a result naming ref's case (id, suite, name, file, line), outcome passed.
CaseResult case_result(const CaseRef& ref);

// RunOptions: how cases run.
struct RunOptions {
  bool accept = false;  // differing debug_string goldens are accepted, not failures
  // report_logs: also record the eager run with ids, norm hashes (inputs too)
  // and module markers, for --report (CaseResult::report_eager_log).
  bool report_logs = false;
};

// run_case: runs one case in this process and never throws for a user error.
CaseResult run_case(const CaseRef& ref, const RunOptions& options = {});

// device_available: whether tensors can be made on device ("cpu", "cuda:1", ...).
bool device_available(const std::string& device);

// skip_reason: why ref's case is skipped here (its skip_if conditions, or a
// device this machine lacks), or nullopt when it runs; run_case and `opspec
// bench` both ask it.
std::optional<std::string> skip_reason(const CaseRef& ref);

// set_cuda_device_count: what device_available takes the number of CUDA
// devices to be, without asking CUDA in this process. The worker pool
// probes in a child of its own: a process that initialized CUDA cannot hand
// it to the children it forks, and each fresh worker probing again cost
// milliseconds (See Note [Isolation]).
void set_cuda_device_count(int count);

}  // namespace opspec::spec
