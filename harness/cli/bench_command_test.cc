// `opspec bench` as a command: the table and JSON of a suite, --baseline
// failing (exit 1, naming the case) on a slowdown injected by a backend that
// sleeps and passing without it, a refused case failing the run, --fixture,
// and usage errors (--repetitions and --min-time out of range among them).
#include "harness/cli/internal/bench_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "runtime/compile/backend.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace bench_command_test {

using ::testing::HasSubstr;
using ::testing::Not;

std::atomic<bool> g_slow{false};

struct Result {
  int status;
  std::string out, err;
};

Result bench(std::vector<std::string> args) {
  static const bool registered = [] {
    register_backend("bench_command_test_toggle", [](const Graph& g, const std::vector<Tensor>& examples) {
      CompiledGraph run = eager_backend(g, examples);
      return CompiledGraph([run](const std::vector<Tensor>& in) {
        if (g_slow) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        return run(in);
      });
    });
    register_backend("bench_command_test_wrong", [](const Graph& g, const std::vector<Tensor>& examples) {
      CompiledGraph run = eager_backend(g, examples);
      return CompiledGraph([run](const std::vector<Tensor>& in) {
        std::vector<Tensor> out = run(in);
        for (Tensor& t : out) t = ops::neg(t);
        return out;
      });
    });
    return true;
  }();
  static_cast<void>(registered);
  std::ostringstream out, err;
  const int status = cli::internal::run_bench_command(args, out, err, /*tty=*/false);
  return {status, out.str(), err.str()};
}

std::string write(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

constexpr const char* kSuite = R"(
suite: cmd
cases:
  - name: relu
    inputs: {x: {shape: [64]}}
    program: return relu(x)
    bench: {backends: [bench_command_test_toggle]}
)";

TEST(BenchCommand, BaselineFailsOnAnInjectedSlowdownOnly) {
  const std::string suite = write("bench_cmd.yaml", kSuite);
  const std::string json = ::testing::TempDir() + "/bench_baseline.json";
  g_slow = false;
  const Result first = bench({suite, "--min-time", "0.02", "--repetitions", "2", "--json", json});
  ASSERT_EQ(first.status, 0) << first.out << first.err;
  EXPECT_THAT(first.out, HasSubstr("cmd::relu"));
  EXPECT_THAT(first.out, HasSubstr("compile:bench_command_test_toggle"));
  // Ten times slower allowed: the same code passes whatever the machine's noise.
  const Result same = bench({suite, "--min-time", "0.02", "--repetitions", "2", "--baseline", json,
                             "--max-regression", "1000%"});
  EXPECT_EQ(same.status, 0) << same.out;
  g_slow = true;
  const Result slow = bench({suite, "--min-time", "0.02", "--repetitions", "2", "--baseline", json,
                             "--max-regression", "1000%"});
  g_slow = false;
  EXPECT_EQ(slow.status, 1);
  EXPECT_THAT(slow.out, HasSubstr("REGRESSION: cmd::relu/compile:bench_command_test_toggle"));
}

TEST(BenchCommand, RefusedCasesFixturesAndUsage) {
  const Result wrong = bench({write("bench_wrong.yaml", R"(
cases:
  - name: neg
    inputs: {x: {shape: [8]}}
    program: return relu(x)
    bench: {backends: [bench_command_test_wrong]}
)"),
                              "--min-time", "0.01"});
  EXPECT_EQ(wrong.status, 1);
  EXPECT_THAT(wrong.out, HasSubstr("was not timed: its result differs from eager's"));
  const Result fixture = bench({"--fixture", "gelu_chain", "--min-time", "0.01", "--repetitions", "1", "--backends", "eager"});
  EXPECT_EQ(fixture.status, 0) << fixture.err;
  EXPECT_THAT(fixture.out, HasSubstr("fixtures::gelu_chain"));
  EXPECT_EQ(bench({"--fixture", "no_such_fixture"}).status, 2);
  EXPECT_EQ(bench({"--min-time", "-1"}).status, 2);
  EXPECT_EQ(bench({"--frobnicate"}).status, 2);
  EXPECT_THAT(bench({"--baseline"}).err, HasSubstr("--baseline needs a value"));
}

// A fractional or huge --repetitions was cast to an int (0.5 -> 0 rounds, 1e10
// -> whatever the cast gave) and every timing read 0 ns with exit 0.
TEST(BenchCommand, RepetitionsAndMinTimeAreRefusedOutOfRange) {
  const std::string suite = write("bench_reps.yaml", kSuite);
  for (const char* bad : {"0.5", "1e10", "0", "-3", "x", "", "2147483648", "10001"}) {
    const Result r = bench({suite, "--min-time", "0.01", "--repetitions", bad});
    EXPECT_EQ(r.status, 2) << bad << ": " << r.out;
    EXPECT_THAT(r.err, HasSubstr(std::string("--repetitions: not a whole number from 1 to 10000: '") + bad + "'"));
  }
  for (const char* bad : {"inf", "nan", "0", "-1", "1e9"}) {  // inf never ended; nan timed one call a round
    const Result r = bench({suite, "--min-time", bad});
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_THAT(r.err, HasSubstr(std::string("--min-time: not a number of seconds above 0 and at most 3600: '") + bad));
  }
  const Result ok = bench({suite, "--min-time", "0.01", "--repetitions", "3"});
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_THAT(ok.out, Not(HasSubstr(" 0 ns")));
}

// --max-regression is a percentage, with or without '%': 0.5 was read as 50%,
// 1 as 100% and 1.5 as 1.5%. A baseline of 0.001 ns makes every timing
// regress, so the REGRESSION line shows the allowance the command took.
TEST(BenchCommand, MaxRegressionIsAlwaysAPercentage) {
  const std::string suite = write("bench_pct.yaml", kSuite);
  const std::string baseline = write("bench_pct_baseline.json", R"({"benchmarks": [
    {"name": "cmd::relu/eager", "run_type": "iteration", "real_time": 0.001, "time_unit": "ns"}]})");
  for (const auto& [given, shown] : std::vector<std::pair<std::string, std::string>>{
           {"0.5", "allowed 0.5%"}, {"1", "allowed 1%"}, {"1.5", "allowed 1.5%"}, {"10%", "allowed 10%"},
           {"0", "allowed 0%"}}) {
    const Result r = bench({suite, "--min-time", "0.01", "--repetitions", "1", "--baseline", baseline,
                            "--max-regression", given});
    EXPECT_EQ(r.status, 1) << given << ": " << r.err;
    EXPECT_THAT(r.out, HasSubstr("REGRESSION: cmd::relu/eager")) << given;
    EXPECT_THAT(r.out, HasSubstr(shown)) << given;
  }
  for (const char* bad : {"-1", "abc", "10%%", "%", "nan", "inf", ""}) {
    const Result r = bench({suite, "--baseline", baseline, "--max-regression", bad});
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_THAT(r.err, HasSubstr(std::string("--max-regression: not a percentage >= 0 (10 or 10%): '") + bad + "'"));
  }
  // Without --baseline there is nothing to compare with: said, not ignored.
  const Result alone = bench({suite, "--max-regression", "5"});
  EXPECT_EQ(alone.status, 2);
  EXPECT_THAT(alone.err, HasSubstr("--max-regression needs --baseline"));
}

// --load was refused ("unknown option --load") though the help offered it to
// every command. A plugin that loads is benched by the `opspec` executable
// (this test binary does not export opspec's symbols to a plugin; see
// OpspecCli.BenchLoadsAPlugin); here a missing one is named as `run` names it.
TEST(BenchCommand, LoadNamesAMissingPlugin) {
  const Result r = bench({"--load", "./no_such_plugin.so", write("bench_load.yaml", kSuite)});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("opspec bench: --load ./no_such_plugin.so: "));
  EXPECT_THAT(r.err, HasSubstr("No such file"));
}

// One file that does not load fails the run (exit 1) but the other files'
// cases are still timed, as `opspec run` goes on past a bad file.
TEST(BenchCommand, ABadFileFailsTheRunAndTheOthersAreTimed) {
  const std::string dir = ::testing::TempDir() + "/bench_bad_file";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/a_bad.yaml") << "suite: bad\ncases:\n  - name: x\n    inputs: {x: {shape: [2]}\n";
  std::ofstream(dir + "/b_good.yaml") << kSuite;
  const Result r = bench({dir, "--min-time", "0.01", "--repetitions", "1"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("a_bad.yaml:5:1: error: end of map flow not found"));
  EXPECT_THAT(r.out, HasSubstr("a_bad.yaml::<load>"));
  EXPECT_THAT(r.out, HasSubstr("error: " + dir + "/a_bad.yaml:5:1"));
  EXPECT_THAT(r.out, HasSubstr("cmd::relu"));
  EXPECT_THAT(r.out, HasSubstr("compile:bench_command_test_toggle"));
  EXPECT_EQ(bench({dir + "/no_such_dir"}).status, 2);  // a PATH that is not there is still a usage error
}

// A --filter that matches no bench case exits 5 (as `opspec run`, and pytest
// when it collects nothing), so a typo in CI does not pass as "nothing slower".
TEST(BenchCommand, AFilterThatMatchesNothingExits5) {
  const Result r = bench({write("bench_filter.yaml", kSuite), "--filter", "no_such_case"});
  EXPECT_EQ(r.status, 5);
  EXPECT_THAT(r.out, HasSubstr("no case with a `bench:` section matches --filter 'no_such_case'"));
}

// An empty file name was taken as "no file": --json "" wrote nothing, silently.
TEST(BenchCommand, EmptyFileNamesAreUsageErrors) {
  const std::string suite = write("bench_empty.yaml", kSuite);
  for (const char* flag : {"--json", "--baseline"}) {
    const Result r = bench({suite, flag, ""});
    EXPECT_EQ(r.status, 2) << flag;
    EXPECT_THAT(r.err, HasSubstr(std::string(flag) + " needs a file name, got ''"));
  }
}

// Checked before anything is timed, as usage errors (exit 2): a misspelt
// --backends (it exited 1, "a case failed", after timing the others), a --json
// that cannot be written (said after the whole run), a baseline that is not
// benchmark JSON; and a baseline whose names match no timing (it passed).
TEST(BenchCommand, BackendsOutputAndBaselineAreCheckedFirst) {
  const std::string suite = write("bench_first.yaml", kSuite);
  const Result typo = bench({suite, "--backends", "eager,fsued"});
  EXPECT_EQ(typo.status, 2);
  EXPECT_THAT(typo.err, HasSubstr("--backends: unknown backend 'fsued'; did you mean 'fused'?"));
  const Result dir = bench({suite, "--json", ::testing::TempDir()});
  EXPECT_EQ(dir.status, 2);
  EXPECT_THAT(dir.err, HasSubstr("it is a directory"));
  EXPECT_THAT(dir.out, Not(HasSubstr("cmd::relu")));  // nothing was timed
  const Result junk = bench({suite, "--baseline", write("bench_junk.json", "not json")});
  EXPECT_EQ(junk.status, 2);
  EXPECT_THAT(junk.err, HasSubstr("the baseline is not benchmark JSON"));
  EXPECT_THAT(junk.out, Not(HasSubstr("cmd::relu")));
  const Result other = bench({suite, "--min-time", "0.01", "--repetitions", "1", "--baseline",
                              write("bench_other.json", R"({"benchmarks": [
    {"name": "other::x/eager", "run_type": "iteration", "real_time": 5, "time_unit": "ns"}]})")});
  EXPECT_EQ(other.status, 2);
  EXPECT_THAT(other.out, HasSubstr("baseline: 0 timings compared, 2 new (not in the baseline), 1 only in the baseline"));
  EXPECT_THAT(other.err, HasSubstr("no timing has the name of a baseline entry: nothing was compared"));
}

// A case `opspec run` skips here is listed as skipped, not failed (a CUDA case
// failed every CPU-only bench job); no case to time exits 5; a fixture named
// twice is timed once (it was a duplicate-case error at a made-up position).
TEST(BenchCommand, SkipsNothingToTimeAndRepeatedFixtures) {
  const Result gpu = bench({write("bench_gpu.yaml", R"(
cases:
  - name: gpu
    devices: [cuda]
    skip_if: [no_cuda]
    inputs: {x: {shape: [8]}}
    program: return relu(x)
    bench: true
)"),
                            "--backends", "eager"});
  if (gpu.out.find("skipped") != std::string::npos) {  // no GPU here
    EXPECT_EQ(gpu.status, 0) << gpu.out << gpu.err;
    EXPECT_THAT(gpu.out, HasSubstr("skipped: skip_if no_cuda: CUDA is not available"));
  }
  const Result none = bench({write("bench_none.yaml", "cases:\n  - {name: a, program: return 1}\n")});
  EXPECT_EQ(none.status, 5);
  EXPECT_THAT(none.out, HasSubstr("no case with a `bench:` section found"));
  const Result twice = bench({"--fixture", "gelu_chain", "--fixture", "gelu_chain", "--min-time", "0.01",
                              "--repetitions", "1", "--backends", "eager"});
  EXPECT_EQ(twice.status, 0) << twice.err;
  EXPECT_EQ(twice.out.find("fixtures::gelu_chain"), twice.out.rfind("fixtures::gelu_chain"));
}

}  // namespace bench_command_test
}  // namespace opspec
