// spec_loader_names_test.cc: the names a spec gives that the loader checks
// against what is registered (ops, backends, devices, case names), so that a
// typo is an error with its position, not a check that passes vacuously; and
// the forms of `outputs:`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/spec/spec_loader.h"

namespace opspec::spec {
namespace spec_loader_names_test {

using ::testing::HasSubstr;

// case_errors: every case's own YAML errors, one per line ("" when none).
std::string case_errors(std::string_view yaml) {
  auto s = load_suite_string(yaml, "t.yaml");
  if (!s.ok()) return std::string(s.status().message());
  std::string errors;
  for (const CaseSpec& c : s->cases) {
    if (c.spec_error) errors += (errors.empty() ? "" : "\n") + *c.spec_error;
  }
  return errors;
}

// one_case: a file with one case whose expect: and compile: lines are given.
std::string one_case(std::string_view expect, std::string_view compile = "") {
  return str_cat("cases:\n  - name: c\n    inputs: {x: {shape: [2]}}\n    program: return relu(x)\n",
                 compile.empty() ? "" : str_cat("    compile: ", compile, "\n"), "    expect: ", expect, "\n");
}

TEST(SpecLoaderNames, OpListsNameRegisteredOps) {
  // Every spelling of Note [Op name patterns] that names an op loads.
  EXPECT_EQ(case_errors(one_case("{ops_exclude: [aten::add, add, add.Tensor, aten::relu.default, aten::sub.Tensor]}")),
            "");
  // A name that matches no op would let ops_exclude and ignore_ops pass whatever ran.
  EXPECT_EQ(case_errors(one_case("{ops_exclude: [aten::Relu]}")),
            "t.yaml:5:28: error: 'ops_exclude' entry 'aten::Relu' names no registered op; did you mean "
            "'aten::relu'? (See Note [Op name patterns]: aten::add, add, aten::add.Tensor)");
  EXPECT_THAT(case_errors(one_case("{ops: [aten::relu], ignore_ops: [aten::relux]}")),
              HasSubstr("t.yaml:5:46: error: 'ignore_ops' entry 'aten::relux' names no registered op"));
  EXPECT_THAT(case_errors(one_case("{ops_contain: [relu, torch.relu]}")),
              HasSubstr("'ops_contain' entry 'torch.relu' names no registered op"));
  EXPECT_THAT(case_errors(one_case("{function_ops: [aten::relu.Tensor]}")),
              HasSubstr("'function_ops' entry 'aten::relu.Tensor' names no registered op"));
  // .default names the unnamed overload alone, which aten::add does not have.
  EXPECT_THAT(case_errors(one_case("{ops_exclude: [aten::add.default]}")),
              HasSubstr("'ops_exclude' entry 'aten::add.default' names no registered op"));
  // An overload that exists only under another op is not a match.
  EXPECT_THAT(case_errors(one_case("{ops: [aten::relu.Scalar]}")), HasSubstr("names no registered op"));
}

TEST(SpecLoaderNames, TyposInCompileAreCaseErrorsThatExpectErrorCannotHide) {
  // expect.error matches the case's run-time error; these are its YAML's.
  EXPECT_THAT(case_errors(one_case("{error: disallow}", "{fullgraph: true, disallow_in_graph: [aten::subb]}")),
              HasSubstr("t.yaml:5:52: error: 'disallow_in_graph' entry 'aten::subb' names no registered op"));
  // (This binary's tests register more backends than eager, aot_eager and fused.)
  EXPECT_THAT(case_errors(one_case("{error: backend}", "{backend: fsued}")),
              HasSubstr("t.yaml:5:24: error: unknown backend 'fsued'; did you mean 'fused'? (registered: aot_eager, "));
  EXPECT_THAT(case_errors(one_case("{graphs: 1}", "{backward_backend: inductor}")),
              HasSubstr("t.yaml:5:33: error: unknown backend 'inductor'"));
  EXPECT_EQ(case_errors(one_case("{graphs: 1}", "{backend: aot_eager, backward_backend: eager}")), "");
}

TEST(SpecLoaderNames, DefaultsBackendIsCheckedAndReachesCasesWithoutCompile) {
  auto bad = load_suite_string("defaults: {backend: fusd}\ncases: []\n", "t.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("t.yaml:1:21: error: unknown backend 'fusd'"));
  // A case that runs compiled because of what it expects, with no compile:
  // section, runs on defaults.backend (it ran on eager before).
  auto s = load_suite_string("defaults: {backend: fused}\n" + one_case("{fused_kernels: 1}"), "t.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_FALSE(s->cases[0].compile.has_value());
  EXPECT_EQ(s->cases[0].default_backend, "fused");
}

TEST(SpecLoaderNames, DevicesAreListedOnceAndNeverEmpty) {
  EXPECT_EQ(case_errors("cases:\n  - {name: c, devices: [cpu, meta, cpu], program: return 1}\n"),
            "t.yaml:2:36: error: device 'cpu' is listed twice in 'devices'");
  auto empty = load_suite_string("defaults: {devices: []}\ncases: []\n", "t.yaml");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(std::string(empty.status().message()), HasSubstr("t.yaml:1:21: error: 'devices' must not be empty"));
}

TEST(SpecLoaderNames, CacheSizeLimitLeavesRoomForOneGraph) {
  EXPECT_EQ(case_errors(one_case("{graphs: 1}", "{cache_size_limit: 0}")),
            "t.yaml:5:33: error: 'cache_size_limit' is out of range: 0 is not in [1, 1048576]");
}

TEST(SpecLoaderNames, ACaseWithoutAUsableNameNeverTakesAnotherCasesName) {
  // The bad name's own error is reported, and case_2 (taken) is not reused.
  auto s = load_suite_string(
      "cases:\n"
      "  - {name: case_2, program: return 1}\n"
      "  - {name: my case, program: return 1}\n"
      "  - {name: other, program: return 1}\n",
      "t.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->cases.size(), 3u);
  EXPECT_EQ(s->cases[1].name, "case_2_");
  ASSERT_TRUE(s->cases[1].spec_error.has_value());
  EXPECT_THAT(*s->cases[1].spec_error, HasSubstr("t.yaml:3:12: error: case name 'my case' must be non-empty"));
  EXPECT_FALSE(s->cases[0].spec_error.has_value());
  EXPECT_FALSE(s->cases[2].spec_error.has_value());
}

TEST(SpecLoaderNames, OutputsTakeOneListPerOutputAndTolerances) {
  auto s = load_suite_string(one_case("{outputs: {values: [[1, 2], [3]], rtol: 0, atol: 0.5}}"), "t.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  const OutputsSpec& o = *s->cases[0].expect.outputs;
  EXPECT_TRUE(o.per_output);
  EXPECT_EQ(o.values, (std::vector<std::vector<double>>{{1, 2}, {3}}));
  EXPECT_EQ(o.rtol, 0.0);
  EXPECT_EQ(o.atol, 0.5);
  EXPECT_EQ(case_errors(one_case("{outputs: [[1, 2], 3]}")),
            "t.yaml:5:32: error: 'outputs' mixes lists and numbers: give one list per output, or the single "
            "output's numbers");
  EXPECT_EQ(case_errors(one_case("{outputs: [1, [2]]}")),
            "t.yaml:5:24: error: 'outputs' mixes lists and numbers: give one list per output, or the single "
            "output's numbers");
  EXPECT_EQ(case_errors(one_case("{outputs: {values: [1], rtol: -0.0, atol: 0}}")), "");  // -0 is 0
  EXPECT_THAT(case_errors(one_case("{outputs: {values: [1], rtol: -1e-9, atol: 0}}")),
              HasSubstr("'rtol' must be non-negative"));
  EXPECT_EQ(case_errors(one_case("{outputs: {values: [1], rtol: 0.1}}")),
            "t.yaml:5:37: error: 'rtol' given without 'atol': give both or neither");
  EXPECT_EQ(case_errors(one_case("{outputs: {rtol: 0, atol: 0}}")),
            "t.yaml:5:23: error: 'outputs' needs 'values' (a list of numbers, or one list per output)");
}

TEST(SpecLoaderNames, InputNamesThatTheProgramReadsAsLiteralsAreRefused) {
  // `f32` in a program is the dtype, so an input called f32 could never be read.
  for (const char* name : {"f32", "True", "None", "inf", "return"}) {
    EXPECT_EQ(case_errors(str_cat("cases:\n  - name: c\n    inputs: {", name, ": {shape: [2]}}\n    program: return 1\n")),
              str_cat("t.yaml:3:14: error: input name '", name,
                      "' is reserved in the program language (True, None, inf, dtypes such as f32, return); rename "
                      "the input"))
        << name;
  }
  EXPECT_EQ(case_errors("cases:\n  - name: c\n    inputs: {f32x: {shape: [2]}}\n    program: return f32x\n"), "");
}

TEST(SpecLoaderNames, BenchSizesSayWhatAShapeIs) {
  EXPECT_EQ(case_errors("cases:\n  - name: c\n    inputs: {x: {shape: [2]}}\n    program: return relu(x)\n"
                        "    bench: {sizes: {x: [8, 16]}}\n"),
            "t.yaml:5:25: error: bench.sizes of 'x' lists shapes, and '8' is not one: write [[8], [16]] for two 1-d "
            "sizes");
}

}  // namespace spec_loader_names_test
}  // namespace opspec::spec
