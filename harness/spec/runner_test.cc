// runner_test.cc: run_case on small suites: every expectation's pass and
// fail path, errors, xfail, skips, accept. See Note [Running a case].
#include "harness/spec/runner.h"

#include <cstdlib>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/spec/spec_loader.h"
#include "runtime/autograd/formulas.h"
#include "runtime/compile/logging.h"
#include "runtime/core/grad_mode.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/ops.h"

namespace opspec::spec {
namespace runner_test {

using ::testing::HasSubstr;
using ::testing::Not;

SuiteSpec load(std::string_view yaml) {
  absl::StatusOr<SuiteSpec> s = load_suite_string(yaml, "runner_test.yaml");
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : SuiteSpec{};
}

CaseResult run_one(std::string_view yaml, RunOptions options = {}) {
  static std::vector<std::unique_ptr<SuiteSpec>> keep;  // CaseRef points into the suite
  keep.push_back(std::make_unique<SuiteSpec>(load(yaml)));
  std::vector<CaseRef> refs = expand_cases(*keep.back());
  EXPECT_EQ(refs.size(), 1u);
  if (refs.empty()) return {};
  return run_case(refs[0], options);
}

constexpr const char* kAddSub = R"(
cases:
  - name: add_sub
    inputs:
      x: {shape: [4], init: arange}
    program: |
      a = add(x, 1)
      b = sub(a, 1)
      return add(b, 1)
    expect:
      %s
)";

std::string with_expect(std::string_view expect) { return absl::StrFormat(kAddSub, expect); }

TEST(SpecRunner, OpsPassAndFail) {
  CaseResult ok = run_one(with_expect("ops: [aten::add.Tensor, aten::sub.Tensor, aten::add]"));
  EXPECT_EQ(ok.outcome, Outcome::kPassed) << ok.message;
  CaseResult bad = run_one(with_expect("ops: [aten::add.Tensor, aten::mul.Tensor, aten::add.Tensor]"));
  EXPECT_EQ(bad.outcome, Outcome::kFailed);
  EXPECT_THAT(bad.message, HasSubstr("expect.ops"));
  EXPECT_THAT(bad.message, HasSubstr("aten::mul.Tensor"));
  EXPECT_THAT(bad.message, HasSubstr("aten::sub.Tensor"));
}

TEST(SpecRunner, ContainAndExclude) {
  EXPECT_EQ(run_one(with_expect("ops_contain: [aten::sub, aten::add]")).outcome, Outcome::kPassed);
  EXPECT_EQ(run_one(with_expect("ops_contain: [aten::add, aten::mul]")).outcome, Outcome::kFailed);
  EXPECT_EQ(run_one(with_expect("ops_exclude: [aten::mul]")).outcome, Outcome::kPassed);
  CaseResult bad = run_one(with_expect("ops_exclude: [sub]"));
  EXPECT_EQ(bad.outcome, Outcome::kFailed);
  EXPECT_THAT(bad.message, HasSubstr("aten::sub.Tensor"));
}

TEST(SpecRunner, Outputs) {
  EXPECT_EQ(run_one(with_expect("outputs: [1, 2, 3, 4]")).outcome, Outcome::kPassed);
  CaseResult bad = run_one(with_expect("outputs: [1, 2, 3, 5]"));
  EXPECT_EQ(bad.outcome, Outcome::kFailed);
  EXPECT_THAT(bad.message, HasSubstr("Mismatched elements: 1 / 4"));
}

// A two-output case: relu(x) and neg(x) of [1, -2, 3].
std::string two_outputs(std::string_view expect, std::string_view devices = "[cpu]") {
  return absl::StrFormat(
      "cases:\n  - name: two\n    devices: %s\n    inputs: {x: {values: [1, -2, 3]}}\n"
      "    program: return relu(x), neg(x)\n    expect: {outputs: %s}\n",
      devices, expect);
}

TEST(SpecRunner, OutputsOfEveryOutputAreChecked) {
  // A flat list once checked the first output and said nothing of the rest.
  CaseResult flat = run_one(two_outputs("[1, 0, 3]"));
  EXPECT_EQ(flat.outcome, Outcome::kFailed);
  EXPECT_THAT(flat.message, HasSubstr("the case returned 2 outputs; a flat 'outputs' list checks a single one"));
  EXPECT_EQ(run_one(two_outputs("[[1, 0, 3], [-1, 2, -3]]")).outcome, Outcome::kPassed);
  CaseResult second = run_one(two_outputs("[[1, 0, 3], [-1, 2, 3]]"));
  EXPECT_EQ(second.outcome, Outcome::kFailed);
  EXPECT_THAT(second.message, HasSubstr("output 1: Tensor-likes are not close!"));
  CaseResult count = run_one(two_outputs("[[1, 0, 3]]"));
  EXPECT_EQ(count.outcome, Outcome::kFailed);
  EXPECT_THAT(count.message, HasSubstr("the case returned 2 outputs; 'outputs' lists 1"));
}

TEST(SpecRunner, OutputsToleranceIsAssertClosesOrTheCasesOwn) {
  // f32's default (rtol 1.3e-6, atol 1e-5) lets 1e-6 through; atol 0 does not.
  EXPECT_EQ(run_one(two_outputs("[[1, 0, 3.000001], [-1, 2, -3]]")).outcome, Outcome::kPassed);
  CaseResult exact = run_one(two_outputs("{values: [[1, 0, 3.000001], [-1, 2, -3]], rtol: 0, atol: 0}"));
  EXPECT_EQ(exact.outcome, Outcome::kFailed);
  EXPECT_THAT(exact.message, HasSubstr("Greatest absolute difference"));
  EXPECT_EQ(run_one(two_outputs("{values: [[1, 0, 3.1], [-1, 2, -3]], rtol: 0, atol: 0.2}")).outcome,
            Outcome::kPassed);
}

TEST(SpecRunner, OutputsOnMetaCheckTheShapeOnly) {
  // Meta tensors have no values; assert_close compares their metadata, as in PyTorch.
  EXPECT_EQ(run_one(two_outputs("[[7, 7, 7], [7, 7, 7]]", "[meta]")).outcome, Outcome::kPassed);
  CaseResult shape = run_one(two_outputs("[[7, 7], [7, 7, 7]]", "[meta]"));
  EXPECT_EQ(shape.outcome, Outcome::kFailed);
  EXPECT_THAT(shape.message, HasSubstr("expect.outputs has 2 values but the output [3] has 3 elements"));
}

TEST(SpecRunner, ACaseWithoutCompileRunsOnTheDefaultsBackend) {
  // It ran on eager, so equivalent: compared eager with eager and fused_kernels read 0.
  const std::string yaml =
      "defaults: {backend: fused}\ncases:\n  - name: c\n    inputs: {x: {shape: [8]}}\n"
      "    program: return relu(add(x, 1))\n    expect: {fused_kernels: 1, equivalent: bitwise}\n";
  CaseResult r = run_one(yaml);
  EXPECT_EQ(r.outcome, Outcome::kPassed) << r.message;
  EXPECT_EQ(r.fused_kernels.size(), 1u);
}

TEST(SpecRunner, GraphBreaksFromDisallowInGraph) {
  constexpr const char* yaml = R"(
cases:
  - name: disallowed_sub_breaks_graph
    inputs:
      x: {shape: [4], init: randn}
    program: |
      a = add(x, 1)
      b = sub(a, 1)
      return add(b, 1)
    compile: {backend: aot_eager, disallow_in_graph: [sub]}
    expect:
      graphs: %d
      graph_breaks: [{reason: "disallow"}]
      equivalent: {rtol: 1e-6, atol: 1e-5}
)";
  CaseResult ok = run_one(absl::StrFormat(yaml, 2));
  EXPECT_EQ(ok.outcome, Outcome::kPassed) << ok.message;
  EXPECT_EQ(ok.graph_breaks.size(), 1u);
  EXPECT_EQ(ok.graphs.size(), 2u);
  CaseResult bad = run_one(absl::StrFormat(yaml, 1));
  EXPECT_EQ(bad.outcome, Outcome::kFailed);
  EXPECT_THAT(bad.message, HasSubstr("expect.graphs"));
}

TEST(SpecRunner, ACaseWithAYamlMistakeFailsWhateverItExpects) {
  // See Note [Two kinds of load errors]: neither xfail nor expect.error hides a typo.
  const CaseResult r = run_one(R"(
cases:
  - name: typo
    program: return 1
    expect: {error: "unknown key"}
    xfail: a typo must not pass as an expected failure
    expct: {ops: []}
)");
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_THAT(r.message, HasSubstr("runner_test.yaml:7:5: error: unknown key 'expct' in case 'typo'"));
}

TEST(SpecRunner, ErrorExpectation) {
  constexpr const char* yaml = R"(
cases:
  - name: mm_shape_error
    inputs:
      a: {shape: [2, 3]}
      b: {shape: [4, 5]}
    program: |
      return mm(a, b)
    expect:
      error: "%s"
)";
  EXPECT_EQ(run_one(absl::StrFormat(yaml, "aten::mm.*shape")).outcome, Outcome::kPassed);
  CaseResult bad = run_one(absl::StrFormat(yaml, "no such text"));
  EXPECT_EQ(bad.outcome, Outcome::kFailed);
  EXPECT_THAT(bad.message, HasSubstr("does not match /no such text/"));
  CaseResult no_error = run_one(with_expect("error: \"anything\""));
  EXPECT_EQ(no_error.outcome, Outcome::kFailed);
  EXPECT_THAT(no_error.message, HasSubstr("ran without one"));
}

TEST(SpecRunner, UnexpectedErrorFailsWithLocation) {
  CaseResult r = run_one(R"(
cases:
  - name: bad
    inputs: {a: {shape: [2, 3]}, b: {shape: [4, 5]}}
    program: |
      c = relu(a)
      return mm(c, b)
)");
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_THAT(r.message, HasSubstr("runner_test.yaml:7:"));
  EXPECT_THAT(r.message, HasSubstr("aten::mm"));
}

// A returned value that is not a tensor or number said "error: the program
// returned a None" with no place; it is now the value's in the return.
TEST(SpecRunner, ReturningWhatIsNotATensorNamesTheValue) {
  const auto message = [](std::string_view returned) {
    return run_one(str_cat("cases:\n  - name: r\n    inputs: {x: {shape: [2]}}\n    program: |\n      return ",
                           returned, "\n"))
        .message;
  };
  EXPECT_THAT(message("None"), HasSubstr("runner_test.yaml:5:14: the program returned a None; return tensors or numbers"));
  EXPECT_THAT(message("x, \"hi\""), HasSubstr("runner_test.yaml:5:17: the program returned a str;"));
  EXPECT_THAT(message("[1, 2]"), HasSubstr("runner_test.yaml:5:14: the program returned a int[];"));
}

TEST(SpecRunner, LoadErrorOfOneCaseCanBeExpected) {
  constexpr const char* yaml = R"(
cases:
  - name: unknown_op
    inputs: {x: {shape: [2]}}
    program: |
      return frobnicate(x)
    expect:
      %s
)";
  CaseResult expected = run_one(absl::StrFormat(yaml, "error: \"unknown op.*frobnicate\""));
  EXPECT_EQ(expected.outcome, Outcome::kPassed) << expected.message;
  CaseResult unexpected = run_one(absl::StrFormat(yaml, "ops: []"));
  EXPECT_EQ(unexpected.outcome, Outcome::kFailed);
  EXPECT_THAT(unexpected.message, HasSubstr("runner_test.yaml:6:14"));
}

TEST(SpecRunner, XfailAndSkip) {
  constexpr const char* yaml = R"(
cases:
  - name: c
    inputs: {x: {shape: [2], init: ones}}
    program: |
      return relu(x)
    %s
    expect:
      outputs: [%s]
)";
  EXPECT_EQ(run_one(absl::StrFormat(yaml, "xfail: known bug", "0, 0")).outcome, Outcome::kXfailed);
  CaseResult xpass = run_one(absl::StrFormat(yaml, "xfail: known bug", "1, 1"));
  EXPECT_EQ(xpass.outcome, Outcome::kFailed);
  EXPECT_THAT(xpass.message, HasSubstr("unexpected pass (xfail: known bug)"));
  EXPECT_EQ(run_one(absl::StrFormat(yaml, "skip_if: [always]", "0, 0")).outcome, Outcome::kSkipped);
  CaseResult cuda = run_one(absl::StrFormat(yaml, "devices: [cuda]", "1, 1"));
  EXPECT_EQ(cuda.outcome, Outcome::kSkipped);
  EXPECT_THAT(cuda.message, HasSubstr("not available"));
}

TEST(SpecRunner, CheckAndDebugStringWithAccept) {
  constexpr const char* yaml = R"(
cases:
  - name: c
    inputs: {x: {shape: [2, 2], init: ones}}
    program: |
      return relu(x)
    expect:
      check: |
        CHECK: aten::relu(t: f32[2, 2])
      debug_string: "%s"
)";
  const std::string golden = "    aten::relu(t: f32[2, 2])  ->  t: f32[2, 2]";
  CaseResult ok = run_one(absl::StrFormat(yaml, golden));
  EXPECT_EQ(ok.outcome, Outcome::kPassed) << ok.message;
  // A trailing newline (a YAML `|` block has one) is not a difference.
  CaseResult ok_newline = run_one(absl::StrFormat(yaml, golden + "\\n"));
  EXPECT_EQ(ok_newline.outcome, Outcome::kPassed) << ok_newline.message;
  CaseResult bad = run_one(absl::StrFormat(yaml, "wrong\\n"));
  EXPECT_EQ(bad.outcome, Outcome::kFailed);
  EXPECT_THAT(bad.message, HasSubstr("expect.debug_string"));
  CaseResult accepted = run_one(absl::StrFormat(yaml, "wrong\\n"), {.accept = true});
  EXPECT_EQ(accepted.outcome, Outcome::kPassed) << accepted.message;
  ASSERT_TRUE(accepted.accepted_debug_string.has_value());
  EXPECT_EQ(*accepted.accepted_debug_string, "    aten::relu(t: f32[2, 2])  ->  t: f32[2, 2]\n");
}

TEST(SpecRunner, CheckFailurePointsAtTheDirectiveInTheYamlFile) {
  // Line 10 holds the failing directive; its pattern starts at column 21.
  CaseResult bad = run_one(R"(
cases:
  - name: c
    inputs: {x: {shape: [2]}}
    program: |
      return relu(x)
    expect:
      check: |
        CHECK: aten::relu
        CHECK-NEXT: aten::mul
)");
  EXPECT_EQ(bad.outcome, Outcome::kFailed);
  EXPECT_THAT(bad.message, HasSubstr("runner_test.yaml:10:21"));
  CaseResult typo = run_one(R"(
cases:
  - name: c
    inputs: {x: {shape: [2]}}
    program: |
      return relu(x)
    compile: {backend: eager}
    expect:
      check_graphs: |
          CHECK: relu
          CHEKC-NEXT: output
)");
  EXPECT_EQ(typo.outcome, Outcome::kFailed);
  EXPECT_THAT(typo.message, HasSubstr("runner_test.yaml:11:11"));
}

// A quoted or folded check is not the file's text line for line: its failure
// names where the text starts and the directive's place in the checks (the
// quoted one's second directive used to be reported at line 10, a line of
// the file that holds no check).
TEST(SpecRunner, QuotedOrFoldedCheckFailureNamesItsStartAndItsOwnPosition) {
  CaseResult quoted = run_one(R"(
cases:
  - name: c
    inputs: {x: {shape: [2]}}
    program: return relu(x)
    expect:
      check: "CHECK: aten::relu\n  CHECK: aten::mul"
)");
  EXPECT_EQ(quoted.outcome, Outcome::kFailed);
  EXPECT_THAT(quoted.message, HasSubstr("runner_test.yaml:7:15: in the checks (a double-quoted scalar) at 2:10: error: "
                                        "CHECK: expected string not found in input"));
  EXPECT_THAT(quoted.message, HasSubstr("(check:2 = the CHECK: on line 2 of the checks (a double-quoted scalar at "
                                        "runner_test.yaml:7:15);"));
  CaseResult folded = run_one(R"(
cases:
  - name: c
    inputs: {x: {shape: [2]}}
    program: return relu(x)
    expect:
      check: >
        CHECK: aten::relu

        CHECK: aten::mul
)");
  EXPECT_EQ(folded.outcome, Outcome::kFailed);
  EXPECT_THAT(folded.message, HasSubstr("runner_test.yaml:8:9: in the checks (a folded scalar) at 2:8: error: "));
  // A folded scalar whose text is the file's stays mapped exactly.
  CaseResult one_line = run_one(R"(
cases:
  - name: c
    inputs: {x: {shape: [2]}}
    program: return relu(x)
    expect:
      check: >
        CHECK: aten::mul
)");
  EXPECT_THAT(one_line.message, HasSubstr("runner_test.yaml:8:16: error: CHECK: expected string"));
}

TEST(SpecRunner, CheckGuardsAndExportFailWithTheirText) {
  CaseResult guards = run_one(R"(
cases:
  - name: c
    inputs: {x: {shape: [4]}}
    program: |
      return neg(x)
    compile:
      calls: [{x: {shape: [5]}}]
    expect:
      check_guards: |
        CHECK: recompile 1: 2 <= L['x'].size()[0]
)");
  EXPECT_EQ(guards.outcome, Outcome::kFailed);
  EXPECT_THAT(guards.message, HasSubstr("expect.check_guards"));
  EXPECT_THAT(guards.message, HasSubstr("recompile 1: tensor 'L['x']' size mismatch at index 0. expected 4, actual 5"));
  CaseResult exported = run_one(R"(
cases:
  - name: c
    inputs: {x: {shape: [4, 3]}}
    program: |
      return neg(x)
    compile: {dynamic: [x.0]}
    expect:
      export: |
        CHECK: placeholder : f32[4, 3]
)");
  EXPECT_EQ(exported.outcome, Outcome::kFailed);
  EXPECT_THAT(exported.message, HasSubstr("expect.export"));
  EXPECT_THAT(exported.message, HasSubstr("%x = placeholder : f32[s0, 3]"));  // the text shown
  CaseResult passes = run_one(R"(
cases:
  - name: c
    inputs: {x: {shape: [4, 3]}}
    program: |
      return neg(x)
    compile: {dynamic: [x.0]}
    expect:
      export: |
        CHECK: placeholder : f32[s0, 3]
      check_guards: |
        CHECK: LAMBDA_GUARD: 2 <= L['x'].size()[0]
)");
  EXPECT_EQ(passes.outcome, Outcome::kPassed) << passes.message;
}

TEST(SpecRunner, CheckModuleFailsWithWhatCompileModuleMade) {
  CaseResult wrong = run_one(R"(
cases:
  - name: c
    fixture: foo
    compile: {module: true}
    expect:
      check_module: |
        CHECK: _orig_mod.l1.weight: f32[4, 5]
)");
  EXPECT_EQ(wrong.outcome, Outcome::kFailed);
  EXPECT_THAT(wrong.message, HasSubstr("expect.check_module"));
  EXPECT_THAT(wrong.message, HasSubstr("_orig_mod.l1.weight: f32[4, 4]"));  // the text shown
  CaseResult plain = run_one(R"(
cases:
  - name: c
    fixture: gelu_chain
    compile: {module: true}
)");
  EXPECT_EQ(plain.outcome, Outcome::kFailed);
  EXPECT_THAT(plain.message, HasSubstr("fixture 'gelu_chain' is not a module fixture"));
  CaseResult passes = run_one(R"(
cases:
  - name: c
    fixture: foo
    compile: {module: true}
    expect:
      equivalent: bitwise
      check_module: |
        CHECK: OptimizedModule(_orig_mod=Foo)
        CHECK-NEXT: orig_mod(): the module given
      check_guards: |
        CHECK: L['input']
)");
  EXPECT_EQ(passes.outcome, Outcome::kPassed) << passes.message;
}

TEST(SpecRunner, RecordNnModuleShowsModuleScopes) {
  CaseResult r = run_one(R"(
cases:
  - name: bar
    fixture: bar
    debug: {record_nn_module: true}
    expect:
      check: |
        CHECK: [nn.Mod]
)");
  EXPECT_EQ(r.outcome, Outcome::kPassed) << r.message;
}

TEST(SpecRunner, RecompileOnNewShapeAndDynamicMark) {
  constexpr const char* yaml = R"(
cases:
  - name: c
    inputs: {x: {shape: [4]}}
    program: |
      return mul(relu(x), 2)
    compile:
      backend: eager
      %s
      calls: [{x: {shape: [8]}}]
    expect:
      recompiles: %d
)";
  CaseResult static_shape = run_one(absl::StrFormat(yaml, "", 1));
  EXPECT_EQ(static_shape.outcome, Outcome::kPassed) << static_shape.message;
  CaseResult dynamic = run_one(absl::StrFormat(yaml, "dynamic: [x.0]", 0));
  EXPECT_EQ(dynamic.outcome, Outcome::kPassed) << dynamic.message;
  CaseResult wrong = run_one(absl::StrFormat(yaml, "", 0));
  EXPECT_EQ(wrong.outcome, Outcome::kFailed);
  EXPECT_THAT(wrong.message, HasSubstr("expect.recompiles"));
}

TEST(SpecRunner, FixtureCaseAndFusedKernels) {
  CaseResult r = run_one(R"(
cases:
  - name: gelu_chain_fuses
    fixture: gelu_chain
    compile: {backend: fused}
    expect:
      fused_kernels: 1
      equivalent: true
)");
  EXPECT_EQ(r.outcome, Outcome::kPassed) << r.message;
  EXPECT_EQ(r.fused_kernels.size(), 1u);
}

// `no_grad: true` runs the case as `with torch.no_grad():`. The mlp's
// parameters require grad, so with grad mode on compile serves the call with
// its AOT forward graph, which saves the first linear's result for gelu's
// backward: the gelu epilogue does not fuse there.
TEST(SpecRunner, NoGradRunsTheCaseWithGradModeOff) {
  constexpr const char* kMlp = R"(
defaults: {no_grad: %s}
cases:
  - name: mlp_fused
    fixture: mlp
    %s
    compile: {backend: fused}
    expect: {graphs: 1, fused_kernels: 1, equivalent: bitwise}
)";
  CaseResult inference = run_one(absl::StrFormat(kMlp, "false", "no_grad: true"));
  EXPECT_EQ(inference.outcome, Outcome::kPassed) << inference.message;
  CaseResult by_default = run_one(absl::StrFormat(kMlp, "true", ""));
  EXPECT_EQ(by_default.outcome, Outcome::kPassed) << by_default.message;
  CaseResult training = run_one(absl::StrFormat(kMlp, "true", "no_grad: false"));
  EXPECT_EQ(training.outcome, Outcome::kFailed);
  EXPECT_THAT(training.message, HasSubstr("expected 1 fused kernel, got 0"));
  EXPECT_TRUE(autograd::is_grad_enabled());  // the guard ended with the case
}

// A fixture is C++: its errors are located at the case that uses it (issue
// 21.12), as a program's are at their statement.
TEST(SpecRunner, FixtureErrorsNameTheCasesLine) {
  ::unsetenv("OPSPEC_ALLOW_CRASH_FIXTURES");  // so `crash` throws instead of aborting
  CaseResult r = run_one("cases:\n  - name: refuses\n    fixture: crash\n");
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_THAT(r.message, HasSubstr("runner_test.yaml:2:5: fixture 'crash': fixture 'crash' aborts the process"));
  CaseResult expected = run_one("cases:\n  - name: refuses\n    fixture: crash\n"
                                "    expect: {error: \"^runner_test\\\\.yaml:2:5: fixture 'crash'\"}\n");
  EXPECT_EQ(expected.outcome, Outcome::kPassed) << expected.message;
}

TEST(SpecRunner, IgnoreOpsTakesOpsOutBeforeTheSequenceChecks) {
  const std::string ignored = with_expect("ignore_ops: [aten::sub]\n      ops: [aten::add.Tensor, aten::add.Tensor]");
  EXPECT_EQ(run_one(ignored).outcome, Outcome::kPassed);
  CaseResult r = run_one(with_expect("ignore_ops: [aten::sub]\n      ops_contain: [aten::sub.Tensor]"));
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_THAT(r.message, HasSubstr("expect.ops_contain"));
}

// runner_test::triple: 3 * x with a formula that forgets the 3.
void register_triple() {
  static const bool registered = [] {
    Library lib("runner_test");
    lib.def("triple(Tensor x) -> Tensor").impl("triple", DispatchKey::kCPU, [](const Tensor& x) {
      return ops::mul(x, 3.0);
    });
    autograd::register_formula({.op = "runner_test::triple", .node_name = "TripleBackward0",
                                .backward = [](const autograd::FormulaCall& c) -> autograd::VariableList {
                                  return {c.grad()};
                                }});
    return true;
  }();
  (void)registered;
}

TEST(SpecRunner, GradcheckPassesAndFailsWithBothJacobians) {
  register_triple();
  constexpr const char* kCase = R"(
cases:
  - name: g
    inputs:
      x: {shape: [2], dtype: f64, requires_grad: true}
    program: |
      return %s(x)
    expect:
      gradcheck: %s
)";
  CaseResult ok = run_one(absl::StrFormat(kCase, "tanh", "true"));
  EXPECT_EQ(ok.outcome, Outcome::kPassed) << ok.message;
  CaseResult bad = run_one(absl::StrFormat(kCase, "triple", "{atol: 1e-6, rtol: 1e-4}"));
  EXPECT_EQ(bad.outcome, Outcome::kFailed);
  EXPECT_THAT(bad.message, HasSubstr("expect.gradcheck: Jacobian mismatch for output 0 with respect to input 0,\n"
                                     "numerical:tensor([[3.0000, 0.0000],\n        [0.0000, 3.0000]], "
                                     "dtype=torch.float64)\nanalytical:tensor([[1.0000, 0.0000],"));
  // A program that calls backward itself is refused by gradcheck, naming why.
  CaseResult self = run_one(R"(
cases:
  - name: g
    inputs:
      x: {shape: [2], dtype: f64, requires_grad: true}
    program: |
      backward(sum(x))
      return grad(x)
    expect:
      gradcheck: true
)");
  EXPECT_THAT(self.message, HasSubstr("gradcheck: the function calls backward()"));
}

TEST(SpecRunner, BackwardAndGradBuiltinsRecordPyTorchsBackwardOps) {
  // The same program eager, then compiled, where backward() is Dynamo's graph
  // break and the gradient comes from the compiled graph's backward.
  constexpr const char* kCase = R"(
cases:
  - name: b
    inputs:
      x: {shape: [3], requires_grad: true}
    program: |
      y = tanh(x)
      backward(sum(y))
      return grad(x)
    %s
)";
  CaseResult r = run_one(absl::StrFormat(kCase, R"(expect:
      ignore_ops: [aten::detach]
      ops: [aten::tanh, aten::sum, aten::ones_like, aten::expand, aten::tanh_backward])"));
  EXPECT_EQ(r.outcome, Outcome::kPassed) << r.message;
  CaseResult compiled = run_one(absl::StrFormat(kCase, R"(compile: {backend: fused}
    expect:
      graph_breaks: [Unsupported Tensor.backward() call]
      equivalent: bitwise)"));
  EXPECT_EQ(compiled.outcome, Outcome::kPassed) << compiled.message;
}

// Error texts are echoed cut short: a long expect.error pattern and a long
// error do not make a megabyte failure message.
TEST(SpecRunner, LongPatternsAndErrorsAreCutInMessages) {
  const std::string name(100000, 'q');
  CaseResult r = run_one("cases:\n  - name: long\n    inputs: {x: {shape: [1]}}\n    program: return " + name +
                         "(x)\n    expect: {error: \"" + std::string(5000, 'z') + "\"}\n");
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_LT(r.message.size(), 6000u);
  EXPECT_THAT(r.message, HasSubstr("(100000 bytes)"));
  EXPECT_THAT(r.message, HasSubstr("(5000 bytes)"));
}

// expect.equivalent compiles the case's inputs marked as its compile step
// marks them (dynamic: [x.0] made a symbolic graph there while equivalence
// compared a static one): every graph's guards here leave x's dim 0 free.
TEST(SpecRunner, EquivalenceComparesTheGraphTheMarksMake) {
  set_log_topics("guards");
  testing::internal::CaptureStderr();
  CaseResult r = run_one(R"(
cases:
  - name: marked
    inputs: {x: {shape: [4, 3]}}
    program: return sum(relu(x), 1)
    compile: {dynamic: [x.0]}
    expect: {equivalent: bitwise}
)");
  const std::string log = testing::internal::GetCapturedStderr();
  set_log_topics("");
  EXPECT_EQ(r.outcome, Outcome::kPassed) << r.message;
  size_t graphs = 0;
  for (size_t at = log.find("GUARDS of graph"); at != std::string::npos; at = log.find("GUARDS of graph", at + 1)) ++graphs;
  EXPECT_EQ(graphs, 2u) << log;  // the compile step's and the equivalence check's
  EXPECT_THAT(log, Not(HasSubstr("size=[4, 3]")));
  EXPECT_THAT(log, HasSubstr("size=[None, 3]"));
}

// An error on a later call says which: it read as the first call's.
TEST(SpecRunner, AnErrorOnALaterCallNamesTheCall) {
  CaseResult r = run_one(R"(
cases:
  - name: refused
    inputs: {x: {shape: [4]}}
    program: return relu(x)
    compile:
      error_on_recompile: true
      calls: [{x: {shape: [4]}}, {x: {shape: [6]}}]
)");
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_THAT(r.message, HasSubstr("Recompiling function refused (graph 1)"));
  EXPECT_THAT(r.message, HasSubstr("in call 3 of the compiled function (compile.calls[1] at runner_test.yaml:8:"));
}

// A break names the call that made it, on its own line and column (it named
// the start of the statement), and a call served by the cache finds no
// break again (Note [Breaks are counted when traced]).
TEST(SpecRunner, BreaksNameTheirCallAndAreCountedWhenTraced) {
  CaseResult r = run_one(R"(
cases:
  - name: site
    inputs: {x: {shape: [4]}}
    program: |
      a = mul(x, 2)
      return add(a,
                 item(sum(a)))
    compile:
      calls: [{x: {shape: [4]}}]
    expect: {graph_breaks: 1}
)");
  EXPECT_EQ(r.outcome, Outcome::kPassed) << r.message;
  ASSERT_EQ(r.graph_breaks.size(), 1u);
  EXPECT_THAT(r.graph_breaks[0], HasSubstr("(at runner_test.yaml:8:18)"));
  CaseResult full = run_one(R"(
cases:
  - name: site
    inputs: {x: {shape: [4]}}
    program: |
      a = mul(x, 2)
      return add(a,
                 item(sum(a)))
    compile: {fullgraph: true}
    expect: {error: "User site: runner_test.yaml:8:18"}
)");
  EXPECT_EQ(full.outcome, Outcome::kPassed) << full.message;
}

}  // namespace
}  // namespace opspec::spec
