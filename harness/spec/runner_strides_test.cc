// runner_strides_test.cc: run_case with inputs laid out by `memory_format:`
// and outputs checked by `expect.strides:`: pass and fail paths, eager and
// per compiled call (a backend that returns contiguous copies provokes a
// compiled-only mismatch). Expected strides are python3-torch 1.13's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_format.h"
#include "harness/spec/runner.h"
#include "harness/spec/spec_loader.h"
#include "runtime/compile/backend.h"
#include "runtime/ops/ops.h"

namespace opspec::spec {
namespace runner_strides_test {

using ::testing::HasSubstr;
using ::testing::Not;

CaseResult run_one(std::string_view yaml) {
  static std::vector<std::unique_ptr<SuiteSpec>> keep;  // CaseRef points into the suite
  absl::StatusOr<SuiteSpec> s = load_suite_string(yaml, "strides_test.yaml");
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return {};
  keep.push_back(std::make_unique<SuiteSpec>(*std::move(s)));
  std::vector<CaseRef> refs = expand_cases(*keep.back());
  EXPECT_EQ(refs.size(), 1u);
  return refs.empty() ? CaseResult{} : run_case(refs[0], {});
}

// a_case: one case from its inputs, program, compile and expect (flow mappings, "" for none).
std::string a_case(std::string_view inputs, std::string_view program, std::string_view compile,
                   std::string_view expect) {
  return absl::StrFormat("cases:\n  - name: c\n    inputs: %s\n    program: |\n      %s\n%s    expect: %s\n", inputs,
                         program, compile.empty() ? "" : str_cat("    compile: ", compile, "\n"), expect);
}

// A backend whose compiled graphs return contiguous copies of eager's outputs:
// the values agree, the strides do not (what assert_size_stride catches).
void register_contiguous_backend() {
  static const bool once = [] {
    register_backend("runner_strides_test_contiguous", [](const Graph& g, const std::vector<Tensor>& examples) {
      CompiledGraph run = eager_backend(g, examples);
      return CompiledGraph([run](const std::vector<Tensor>& in) {
        std::vector<Tensor> out = run(in);
        for (Tensor& t : out) t = ops::contiguous(t);
        return out;
      });
    });
    return true;
  }();
  static_cast<void>(once);
}

constexpr std::string_view kChannelsLast = "{x: {shape: [2, 3, 4, 5], memory_format: channels_last}}";

TEST(SpecRunnerStrides, InputsAreLaidOutWithoutBeingRecorded) {
  // The layout is made where the case's modes cannot see it: the eager run records relu alone.
  CaseResult r = run_one(a_case(kChannelsLast, "return relu(x), x", "",
                                "{ops: [aten::relu], strides: [[60, 1, 15, 3], [60, 1, 15, 3]]}"));
  EXPECT_EQ(r.outcome, Outcome::kPassed) << r.message;
  // The values are the row-major input's (drawn first, then laid out).
  r = run_one(a_case("{x: {shape: [1, 2, 1, 2], init: arange, memory_format: torch.channels_last}}",
                     "return reshape(x, [4])", "", "{outputs: [0, 1, 2, 3], strides: [1]}"));
  EXPECT_EQ(r.outcome, Outcome::kPassed) << r.message;
  r = run_one(a_case("{x: {shape: [1, 2, 1, 2, 1], memory_format: channels_last_3d}}", "return x", "",
                     "{strides: [4, 1, 4, 2, 2]}"));
  EXPECT_EQ(r.outcome, Outcome::kPassed) << r.message;
}

TEST(SpecRunnerStrides, RequiresGradLeafKeepsTheLayout) {
  // torch: x = randn(2,3,4,5).contiguous(memory_format=cl).requires_grad_(); (x*2).sum().backward()
  // gives x.grad.stride() == (60, 1, 15, 3); x stays a leaf.
  CaseResult r = run_one(a_case("{x: {shape: [2, 3, 4, 5], memory_format: channels_last, requires_grad: true}}",
                                "backward(sum(mul(x, 2)))\n      return grad(x), x", "",
                                "{strides: [[60, 1, 15, 3], [60, 1, 15, 3]]}"));
  EXPECT_EQ(r.outcome, Outcome::kPassed) << r.message;
}

TEST(SpecRunnerStrides, WrongStridesFail) {
  CaseResult r = run_one(a_case("{x: {shape: [2, 3]}}", "return relu(t(x))", "", "{strides: [3, 1]}"));
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_EQ(r.message, "expect.strides: expected strides [3, 1], got [1, 3] (sizes [3, 2])");
  r = run_one(a_case(kChannelsLast, "return relu(x), sum(x, [1])", "", "{strides: [[60, 1, 15, 3], [1, 4, 20]]}"));
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_EQ(r.message,
            "expect.strides: output 1: expected strides [1, 4, 20], got [20, 5, 1] (sizes [2, 4, 5]; got a "
            "contiguous layout)");
}

TEST(SpecRunnerStrides, WrongCountFails) {
  CaseResult r = run_one(a_case("{x: {shape: [2, 3]}}", "return x, x", "", "{strides: [3, 1]}"));
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_EQ(r.message,
            "expect.strides: expected the strides of 1 output, got 2 outputs; a flat 'strides' list checks a single "
            "output (give one list per output: [[...], [...]])");
  r = run_one(a_case("{x: {shape: [2, 3]}}", "return x", "", "{strides: [[3, 1], [3, 1]]}"));
  EXPECT_EQ(r.message, "expect.strides: expected the strides of 2 outputs, got 1 output");
}

TEST(SpecRunnerStrides, CompiledCallsMustMatchEager) {
  for (const char* backend : {"eager", "aot_eager", "fused"}) {
    CaseResult r = run_one(a_case(kChannelsLast, "return relu(x), add(transpose(x, 1, 3), 1)",
                                  str_cat("{backend: ", backend, "}"),
                                  "{strides: [[60, 1, 15, 3], [60, 3, 15, 1]]}"));
    EXPECT_EQ(r.outcome, Outcome::kPassed) << backend << ": " << r.message;
  }
}

TEST(SpecRunnerStrides, CompiledOnlyMismatchIsReportedPerCallAndOutput) {
  register_contiguous_backend();
  // Eager's strides are right; the backend's contiguous copies are not, in every call.
  CaseResult r = run_one(a_case("{x: {shape: [2, 3]}}", "return relu(t(x)), relu(x)",
                                "{backend: runner_strides_test_contiguous, calls: [{x: {shape: [4, 3]}}]}",
                                "{strides: [[1, 3], [3, 1]], equivalent: true}"));
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_EQ(r.message,
            "expect.strides: compiled outputs' strides differ from eager's (as inductor's assert_size_stride "
            "checks):\n"
            "  call 1, output 0: compiled strides [2, 1], eager [1, 3] (sizes [3, 2]; got a contiguous layout)\n"
            "  call 2, output 0: compiled strides [4, 1], eager [1, 3] (sizes [3, 4]; got a contiguous layout)");
  EXPECT_THAT(r.message, Not(HasSubstr("expect.equivalent")));  // the values agree
}

TEST(SpecRunnerStrides, LaterCallsCompareWithEagerOnTheirOwnInputs) {
  // Call 2 is row-major (the override), call 3 channels_last of a new shape:
  // each compiled output has the strides eager gives those inputs.
  CaseResult r = run_one(a_case(kChannelsLast, "return mul(x, 2)",
                                "{backend: fused, calls: [{x: {memory_format: contiguous_format}}, "
                                "{x: {shape: [1, 3, 2, 2]}}]}",
                                "{strides: [60, 1, 15, 3], recompiles: 2}"));
  EXPECT_EQ(r.outcome, Outcome::kPassed) << r.message;
}

}  // namespace runner_strides_test
}  // namespace opspec::spec
