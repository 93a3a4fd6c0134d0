// bench.h: `opspec bench`: a spec case's program timed eagerly and compiled
// by each backend, as a user benchmarks compiled against eager.
// See Note [opspec bench].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/spec/runner.h"

namespace opspec::spec {

// Note [opspec bench]
// For each variant of a case's `bench:` (one per set of input sizes), the
// inputs are made once, then each backend is first checked: its compiled
// result must agree with eager's (the equivalence check's default
// tolerances), or its timing is refused with the divergence, as the Dynamo
// benchmark harness refuses to time a wrong model. Its cold call (capture,
// compile and run, on a fresh compiled function) is the compile time; then
// eager and every backend are timed in `repetitions` rounds whose order is
// shuffled each round, so drift and bursts of load spread over all of them;
// a round runs one target's warm calls for min_time / repetitions seconds.
// Each target's figure is the median over rounds of the mean call time, with
// the interquartile range as its spread; peak memory is the CPU allocator's
// high-water mark over one warm call (the device allocator's on cuda). On a
// device with timing events (cuda: DeviceHooks::make_event_timer) a round's
// calls are queued with no wait between them and timed by an event pair, as
// torch.cuda.Event and triton's do_bench time kernels: device time, not
// launches; where a device has no events each call ends with a wait for the
// device and the host clock times it. The cold call waits for the device.
// A spread above 10% of the median, a load average above the cores' count, or
// a CPU frequency governor other than `performance` adds a warning.

// kMaxBenchRepetitions, kMaxBenchMinTime: the most rounds and seconds per
// target run_bench takes; outside (1..10000 rounds, (0, 3600] s) a case's
// result is an error, as 0 rounds gave 0 ns timings and inf never ended.
inline constexpr int kMaxBenchRepetitions = 10000;
inline constexpr double kMaxBenchMinTime = 3600;

// BenchOptions: what to time and for how long.
struct BenchOptions {
  std::vector<std::string> backends = {"eager", "aot_eager", "fused"};  // unless the case names its own
  double min_time = 0.5;     // seconds per target, over all repetitions (a case's min_time wins)
  int repetitions = 5;       // 1 to kMaxBenchRepetitions
  uint64_t shuffle_seed = 0;  // the rounds' order
};

// BenchTiming: one target (eager or a backend) on one variant.
struct BenchTiming {
  std::string target;        // "eager" or the backend's name
  double median_s = 0;       // per call
  double iqr_s = 0;
  int64_t calls = 0;         // warm calls timed in all
  double compile_s = 0;      // cold first call (backends only)
  int graphs = 0, graph_breaks = 0, fused_kernels = 0;
  int64_t peak_bytes = 0;    // allocator high-water mark over one warm call
  bool refused = false;      // compiled result differs from eager: not timed
  std::string refusal;       // the divergence
};

// BenchVariant: one set of input sizes: eager first, then each backend.
struct BenchVariant {
  std::string label;         // "x=[1024]", or "" for the case's own inputs
  std::vector<BenchTiming> timings;
  std::string error;         // this size could not run (the case's other sizes still do)
  bool device_time = false;  // timed on the device between events (cuda), not by the host clock
};

// BenchResult: one case.
struct BenchResult {
  std::string id;            // suite::case
  std::string file;
  int line = 0;
  std::vector<BenchVariant> variants;
  std::vector<std::string> warnings;  // noise: spread, load
  std::string error;                  // the case could not run (load error, exception)
  std::string skipped;                // why the case does not run here (skip_if, a missing device); not timed
  int repetitions = 0;                // rounds each timing's median is over
};

// run_bench: times ref's case (it must have a `bench:` section). Rounds or a
// min_time out of range (See kMaxBenchRepetitions) are the result's error.
BenchResult run_bench(const CaseRef& ref, const BenchOptions& options);

// bench_table: a Compare-style table: a row per case and variant, a column
// per target: time per call (and spread), and for backends the speedup over
// eager, compile time and graphs/breaks; speedups coloured on a TTY.
std::string bench_table(const std::vector<BenchResult>& results, bool color);

// bench_json: Google Benchmark's JSON (one "iteration" entry per timing,
// named "suite::case[/variant]/target", real_time in ns per call, with
// speedup, compile_time_ms, graphs, graph_breaks and peak_bytes counters, and
// "timer": "device_events" or "host"), so Google Benchmark's compare.py reads it.
std::string bench_json(const std::vector<BenchResult>& results);

// Regression: a timing slower than its baseline by more than allowed.
struct Regression {
  std::string name;
  double baseline_ns = 0, current_ns = 0;
};

// BaselineComparison: what comparing with a baseline found.
struct BaselineComparison {
  std::vector<Regression> regressions;
  int compared = 0;           // timings with a baseline entry of their name
  int new_timings = 0;        // timings the baseline has no entry for
  int baseline_only = 0;      // baseline entries no timing has the name of
};

// find_regressions: the entries of results slower than baseline_json's entry
// of the same name by more than max_regression (0.1: 10%); names missing
// from the baseline are new, not regressions (the counts say how many of
// each, so a baseline that matches nothing is seen). Malformed JSON is an error.
absl::StatusOr<BaselineComparison> find_regressions(const std::vector<BenchResult>& results,
                                                    const std::string& baseline_json, double max_regression);

}  // namespace opspec::spec
