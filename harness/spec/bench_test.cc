// run_bench and friends: variants by input size, a backend whose result
// differs refused with the divergence, a regression against a baseline found
// (a backend made slow on purpose) and not found otherwise, the table and the
// JSON; the loader's `bench:` forms and errors.
#include "harness/spec/bench.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/spec/spec_loader.h"
#include "runtime/compile/backend.h"
#include "runtime/core/device_hooks.h"
#include "runtime/ops/ops.h"

namespace opspec::spec {
namespace bench_test {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

std::atomic<bool> g_slow{false};

// Backends for these tests: one off by one (a wrong result), one that sleeps
// 2 ms a call while g_slow is set.
void register_test_backends() {
  static const bool once = [] {
    register_backend("bench_test_off_by_one", [](const Graph& g, const std::vector<Tensor>& examples) {
      CompiledGraph run = eager_backend(g, examples);
      return CompiledGraph([run](const std::vector<Tensor>& in) {
        std::vector<Tensor> out = run(in);
        for (Tensor& t : out) t = ops::add(t, 1.0);
        return out;
      });
    });
    register_backend("bench_test_toggle", [](const Graph& g, const std::vector<Tensor>& examples) {
      CompiledGraph run = eager_backend(g, examples);
      return CompiledGraph([run](const std::vector<Tensor>& in) {
        if (g_slow) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        return run(in);
      });
    });
    return true;
  }();
  static_cast<void>(once);
}

std::vector<BenchResult> bench(std::string_view yaml, BenchOptions options = {.min_time = 0.01, .repetitions = 2}) {
  register_test_backends();
  absl::StatusOr<SuiteSpec> suite = load_suite_string(yaml, "bench.yaml");
  EXPECT_TRUE(suite.ok()) << suite.status();
  std::vector<BenchResult> out;
  if (!suite.ok()) return out;
  for (const CaseRef& ref : expand_cases(*suite)) {
    if (ref.spec->bench) out.push_back(run_bench(ref, options));
  }
  return out;
}

TEST(Bench, VariantsTargetsTableAndJson) {
  const std::vector<BenchResult> r = bench(R"(
suite: b
cases:
  - name: chain
    inputs: {x: {shape: [8]}}
    program: |
      return relu(add(mul(x, 2), 1))
    bench:
      sizes: {x: [[16], [64]]}
      backends: [eager, fused]
  - name: not_benched
    inputs: {x: {shape: [8]}}
    program: return relu(x)
)");
  ASSERT_THAT(r, SizeIs(1));
  EXPECT_EQ(r[0].id, "b::chain");
  ASSERT_THAT(r[0].variants, SizeIs(2));
  EXPECT_EQ(r[0].variants[0].label, "x=[16]");
  EXPECT_EQ(r[0].variants[1].label, "x=[64]");
  const BenchVariant& v = r[0].variants[1];
  ASSERT_THAT(v.timings, SizeIs(3));
  EXPECT_EQ(v.timings[0].target, "eager");
  EXPECT_EQ(v.timings[2].target, "compile:fused");
  for (const BenchTiming& t : v.timings) {
    EXPECT_GT(t.median_s, 0) << t.target;
    EXPECT_GT(t.calls, 0) << t.target;
    EXPECT_FALSE(t.refused) << t.target;
  }
  EXPECT_EQ(v.timings[2].graphs, 1);
  EXPECT_EQ(v.timings[2].fused_kernels, 1);
  EXPECT_GT(v.timings[2].compile_s, 0);
  EXPECT_GT(v.timings[0].peak_bytes, 0);
  const std::string table = bench_table(r, /*color=*/false);
  EXPECT_THAT(table, HasSubstr("b::chain [x=[64]]"));
  EXPECT_THAT(table, HasSubstr("compile:fused"));
  EXPECT_THAT(table, HasSubstr("x, compile "));
  const std::string json = bench_json(r);
  EXPECT_THAT(json, HasSubstr("\"name\": \"b::chain/x=[64]/compile:fused\""));
  EXPECT_THAT(json, HasSubstr("\"speedup\""));
  EXPECT_THAT(json, HasSubstr("\"time_unit\": \"ns\""));
  // On the cpu the host clock times the calls.
  EXPECT_FALSE(v.device_time);
  EXPECT_THAT(json, HasSubstr("\"timer\": \"host\""));
  EXPECT_THAT(table, Not(HasSubstr("CUDA events")));
}

// A case on cuda is timed on the device by events (skipped without a GPU:
// ci/gpu-run runs it): the timings, peak memory from the device allocator and
// the table's note. The 2^24-element chain keeps the device busy far longer
// than the launches take, so eager (five kernels) is slower than fused (one).
TEST(Bench, CudaCasesAreTimedOnTheDeviceByEvents) {
  if (!get_device_hooks(DeviceType::kCUDA).is_available()) GTEST_SKIP() << "no CUDA device available";
  const std::vector<BenchResult> r = bench(R"(
suite: b
cases:
  - name: chain
    devices: [cuda]
    inputs: {x: {shape: [16777216]}}
    program: |
      return tanh(add(sigmoid(mul(x, 2)), x))
    bench: {backends: [fused]}
)",
                                           {.min_time = 0.2, .repetitions = 3});
  ASSERT_THAT(r, SizeIs(1));
  ASSERT_TRUE(r[0].error.empty()) << r[0].error;
  ASSERT_THAT(r[0].variants, SizeIs(1));
  const BenchVariant& v = r[0].variants[0];
  EXPECT_TRUE(v.device_time);
  ASSERT_THAT(v.timings, SizeIs(2));
  EXPECT_GT(v.timings[0].peak_bytes, 4 * (16 << 20));  // eager's results are on the device
  EXPECT_GT(v.timings[0].median_s, v.timings[1].median_s) << bench_table(r, false);
  EXPECT_THAT(bench_table(r, false), HasSubstr("between CUDA events"));
  EXPECT_THAT(bench_json(r), HasSubstr("\"timer\": \"device_events\""));
}

TEST(Bench, AWrongBackendIsRefusedWithTheDivergence) {
  const std::vector<BenchResult> r = bench(R"(
cases:
  - name: wrong
    inputs: {x: {shape: [8]}}
    program: return relu(x)
    bench: {backends: [bench_test_off_by_one]}
)");
  ASSERT_THAT(r, SizeIs(1));
  const BenchTiming& t = r[0].variants.at(0).timings.at(1);
  EXPECT_TRUE(t.refused);
  EXPECT_EQ(t.calls, 0);
  EXPECT_THAT(t.refusal, HasSubstr("results differ"));
  EXPECT_THAT(bench_table(r, false), HasSubstr("refused: differs from eager"));
  // In the JSON an error entry, as Google Benchmark writes one, never a timing.
  const std::string json = bench_json(r);
  EXPECT_THAT(json, HasSubstr("\"error_occurred\": true"));
  EXPECT_THAT(json, HasSubstr("not timed: its result differs from eager's"));
  EXPECT_THAT(json, Not(HasSubstr("\"real_time\": 0")));
}

TEST(Bench, ABaselineCatchesAnInjectedSlowdown) {
  constexpr const char* kSuite = R"(
suite: b
cases:
  - name: toggled
    inputs: {x: {shape: [8]}}
    program: return relu(x)
    bench: {backends: [bench_test_toggle]}
)";
  g_slow = false;
  const std::string baseline = bench_json(bench(kSuite));
  absl::StatusOr<BaselineComparison> same = find_regressions(bench(kSuite), baseline, 10.0);  // 1000%: noise-proof
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_THAT(same->regressions, IsEmpty());
  EXPECT_EQ(same->compared, 2);  // eager and the backend
  g_slow = true;
  absl::StatusOr<BaselineComparison> slow = find_regressions(bench(kSuite), baseline, 10.0);
  g_slow = false;
  ASSERT_TRUE(slow.ok());
  ASSERT_THAT(slow->regressions, SizeIs(1));
  EXPECT_EQ(slow->regressions[0].name, "b::toggled/compile:bench_test_toggle");
  EXPECT_GT(slow->regressions[0].current_ns, 11 * slow->regressions[0].baseline_ns);
  EXPECT_FALSE(find_regressions({}, "not json", 0.1).ok());
  // A baseline of other names compares nothing, and says so (it passed silently).
  absl::StatusOr<BaselineComparison> other = find_regressions(bench(kSuite), R"({"benchmarks": [
      {"name": "x::y/eager", "run_type": "iteration", "real_time": 5, "time_unit": "ns"}]})", 0.1);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->compared, 0);
  EXPECT_EQ(other->new_timings, 2);
  EXPECT_EQ(other->baseline_only, 1);
}

// Zero rounds timed nothing and reported every target at 0 ns; an infinite
// min_time never ended (a case's 1e9 s, as good as). Both are the case's error.
TEST(Bench, RoundsAndTimeOutOfRangeAreTheCasesError) {
  constexpr const char* kSuite = "cases:\n  - {name: a, inputs: {x: {shape: [4]}}, program: return relu(x), bench: true}\n";
  const std::vector<BenchResult> none = bench(kSuite, {.min_time = 0.01, .repetitions = 0});
  ASSERT_THAT(none, SizeIs(1));
  EXPECT_THAT(none[0].error, HasSubstr("repetitions must be at least 1, got 0"));
  EXPECT_THAT(none[0].variants, IsEmpty());
  const std::vector<BenchResult> forever = bench(kSuite, {.min_time = INFINITY, .repetitions = 1});
  ASSERT_THAT(forever, SizeIs(1));
  EXPECT_THAT(forever[0].error, HasSubstr("min_time must be a number of seconds above 0 and at most 3600, got inf"));
  const std::vector<BenchResult> own = bench("cases:\n  - {name: a, inputs: {x: {shape: [4]}}, program: return relu(x), "
                                             "bench: {min_time: 1e9}}\n");
  ASSERT_THAT(own, SizeIs(1));
  // A case's own min_time is refused as it loads, at its line.
  EXPECT_THAT(own[0].error, HasSubstr("bench.yaml:2:85: error: 'min_time' must be a number of seconds above 0 and at "
                                      "most 3600, got 1e+09"));
}

// A break counted once: the table and JSON read the cold call's graphs and
// breaks (it counted the DebugMode call's too: "2 graphs, 2 breaks").
TEST(Bench, GraphsAndBreaksAreOneCalls) {
  const std::vector<BenchResult> r = bench(R"(
cases:
  - name: one_break
    inputs: {x: {shape: [8]}}
    program: |
      a = sin(x)
      graph_break()
      return cos(a)
    bench: {backends: [eager]}
)");
  ASSERT_THAT(r, SizeIs(1));
  const BenchTiming& t = r[0].variants.at(0).timings.at(1);
  EXPECT_EQ(t.graphs, 2);
  EXPECT_EQ(t.graph_breaks, 1);
  EXPECT_THAT(bench_table(r, false), HasSubstr("2 graphs, 1 break)"));
  EXPECT_THAT(bench_json(r), HasSubstr("\"graph_breaks\": 1"));
  EXPECT_THAT(bench_json(r), HasSubstr("\"repetitions\": 2"));  // the rounds given, not always 1
}

// A table of errors alone read past its column widths (ASan: heap overflow;
// release builds printed junk or threw bad_alloc); skipped cases are rows.
TEST(Bench, ErrorsAndSkipsMakeTheirOwnRows) {
  const std::vector<BenchResult> r = bench(R"Y(
cases:
  - {name: skipped, inputs: {x: {shape: [4]}}, program: return relu(x), skip_if: [always], bench: true}
  - {name: gpu, devices: [cuda:7], inputs: {x: {shape: [4]}}, program: return relu(x), bench: true}
  - {name: sizes, inputs: {x: {shape: [2, 2]}}, program: "return mm(x, x)", bench: {sizes: {x: [[2, 2], [2, 3]]}, backends: [eager]}}
)Y");
  ASSERT_THAT(r, SizeIs(3));
  EXPECT_EQ(r[0].skipped, "skip_if always");
  EXPECT_THAT(r[0].variants, IsEmpty());
  EXPECT_EQ(r[1].skipped, "device cuda:7 is not available");
  // One size fails; the other keeps its timings.
  ASSERT_THAT(r[2].variants, SizeIs(2));
  EXPECT_TRUE(r[2].variants[0].error.empty());
  EXPECT_GT(r[2].variants[0].timings.at(0).median_s, 0);
  EXPECT_THAT(r[2].variants[1].error, HasSubstr("mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"));
  const std::string table = bench_table(r, false);
  EXPECT_THAT(table, HasSubstr("skipped: skip_if always"));
  EXPECT_THAT(table, HasSubstr("[x=[2, 3]]  error: "));
  EXPECT_THAT(bench_json(r), HasSubstr("\"error_occurred\": true"));
  std::vector<BenchResult> errors_only(2);
  errors_only[0].id = "s::a";
  errors_only[0].error = "unknown backend 'fsued'";
  errors_only[1].id = "s::b";
  errors_only[1].error = "x";
  EXPECT_EQ(bench_table(errors_only, false), "case\ns::a  error: unknown backend 'fsued'\ns::b  error: x\n");
}

TEST(Bench, LoaderFormsAndErrors) {
  absl::StatusOr<SuiteSpec> ok = load_suite_string(R"Y(
cases:
  - {name: a, inputs: {x: {shape: [2]}, y: {shape: [2]}}, program: "return add(x, y)", bench: {sizes: {x: [[4], [8]], y: [[4], [8]]}, min_time: 0.5}}
  - {name: b, inputs: {x: {shape: [2]}}, program: return x, bench: true}
  - {name: c, inputs: {x: {shape: [2]}}, program: return x}
)Y",
                                                   "b.yaml");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_FALSE(ok->cases[0].spec_error.has_value()) << *ok->cases[0].spec_error;
  ASSERT_THAT(ok->cases[0].bench->variants, SizeIs(2));
  EXPECT_EQ(ok->cases[0].bench->variants[1][1].shape, SizeVec({8}));
  EXPECT_EQ(ok->cases[0].bench->min_time, 0.5);
  EXPECT_TRUE(ok->cases[1].bench.has_value());
  EXPECT_FALSE(ok->cases[2].bench.has_value());
  const auto error_of = [](std::string_view bench) {
    absl::StatusOr<SuiteSpec> s = load_suite_string(
        str_cat("cases:\n  - {name: a, inputs: {x: {shape: [2]}, y: {shape: [2]}}, program: \"return add(x, y)\", bench: ",
                bench, "}\n"),
        "b.yaml");
    if (!s.ok()) return std::string(s.status().message());
    return s->cases.at(0).spec_error.value_or("loaded");
  };
  EXPECT_THAT(error_of("{sizes: {x: [[4], [8]], y: [[4]]}}"), HasSubstr("lists 2 shapes for one input but 1 for 'y'"));
  EXPECT_THAT(error_of("{sizes: {z: [[4]]}}"), HasSubstr("'z' is not an input of case 'a'"));
  EXPECT_THAT(error_of("{sizes: {x: [[-4]]}}"), HasSubstr("negative"));
  EXPECT_THAT(error_of("{min_time: 0}"), HasSubstr("'min_time' must be a number of seconds above 0 and at most 3600, got 0"));
  EXPECT_THAT(error_of("{min_time: 1e9}"), HasSubstr("at most 3600, got 1e+09"));
  EXPECT_THAT(error_of("{backends: []}"), HasSubstr("'backends' must list at least one backend"));
  // Checked as it loads, at the name, as compile.backend is (it failed only under `opspec bench`, unlocated).
  EXPECT_THAT(error_of("{backends: [eager, fsued]}"),
              HasSubstr("b.yaml:2:114: error: unknown backend 'fsued'; did you mean 'fused'?"));
  EXPECT_THAT(error_of("{sizs: 1}"), HasSubstr("unknown key 'sizs' in bench of case 'a'; did you mean 'sizes'?"));
  EXPECT_EQ(error_of("{sizes: {x: [[4]]}}"), "loaded");
}

}  // namespace bench_test
}  // namespace opspec::spec
