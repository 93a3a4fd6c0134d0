// spec_loader_test.cc: the YAML spec loader: the model it builds and every
// class of malformed input, with the exact file:line:col of each message.
#include "harness/spec/spec_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "harness/program/fixture.h"

namespace opspec::spec {
namespace spec_loader_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;

// A fixture for the tests: two default inputs, one of them integral.
OPSPEC_FIXTURE(loader_test_fixture, "returns its inputs", {{"x", {2, 3}}, {"ids", {4}, DType::kInt64, "zeros"}},
               [] { return [](const std::vector<Tensor>& in) { return in; }; });

const std::filesystem::path kTestdata = std::filesystem::path(__FILE__).parent_path() / "testdata";

// y: a YAML text written as a raw string that starts with a line break.
std::string y(std::string_view s) { return std::string(s.substr(s.starts_with('\n') ? 1 : 0)); }

SuiteSpec load_ok(std::string_view yaml) {
  auto s = load_suite_string(yaml, "t.yaml");
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : SuiteSpec{};
}

// load_fails: the file's errors, or, when the file loads, its cases' own
// YAML errors (See Note [Two kinds of load errors]); "" when there are none.
std::string load_fails(std::string_view yaml) {
  auto s = load_suite_string(yaml, "t.yaml");
  if (s.ok()) {
    std::string errors;
    for (const CaseSpec& c : s->cases) {
      if (c.spec_error) errors += (errors.empty() ? "" : "\n") + *c.spec_error;
    }
    EXPECT_FALSE(errors.empty()) << "the file loaded, and no case has an error";
    return errors;
  }
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(s.status().message());
}

// A valid case to build broken ones from: line 1 "cases:", line 2 "- name: c".
constexpr std::string_view kHead = "cases:\n  - name: c\n";

TEST(SpecLoader, FullFileMapsToTheModel) {
  auto loaded = load_suite_file((kTestdata / "full.yaml").string());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const SuiteSpec& s = *loaded;
  EXPECT_EQ(s.name, "full_suite");
  EXPECT_EQ(s.file, (kTestdata / "full.yaml").string());
  ASSERT_EQ(s.cases.size(), 2u);

  const CaseSpec& c = s.cases[0];
  EXPECT_EQ(c.name, "every_key");
  EXPECT_EQ(c.description, "all of it");
  EXPECT_EQ(c.dtype, DType::kFloat32);
  EXPECT_EQ(c.seed, 3u);
  EXPECT_EQ(c.where.line, 6);
  EXPECT_EQ(c.where.column, 5);
  EXPECT_FALSE(c.load_error.has_value()) << *c.load_error;
  ASSERT_EQ(c.inputs.size(), 5u);
  EXPECT_EQ(c.inputs[0].name, "x");
  EXPECT_EQ(c.inputs[0].shape, SizeVec({4}));
  EXPECT_EQ(c.inputs[0].init, "randn");
  EXPECT_FALSE(c.inputs[0].dtype.has_value());
  EXPECT_EQ(c.inputs[0].where.line, 11);
  EXPECT_EQ(c.inputs[0].where.column, 7);
  EXPECT_EQ(c.inputs[1].init, "full");
  EXPECT_EQ(c.inputs[1].fill, 2.5);
  EXPECT_EQ(c.inputs[1].dtype, DType::kBFloat16);
  EXPECT_EQ(c.inputs[1].device, "cpu");
  EXPECT_EQ(c.inputs[2].init, "values");
  EXPECT_EQ(c.inputs[2].values, std::vector<double>({1, 2, 3.5, -4}));
  EXPECT_EQ(c.inputs[3].shape, SizeVec());
  EXPECT_EQ(c.inputs[3].init, "full");
  EXPECT_EQ(c.inputs[3].fill, -1);
  ASSERT_TRUE(c.program.has_value());
  EXPECT_EQ(c.program->source(), "a = add(x, 1)\nb = sub(a, 1)\nreturn add(b, 1)\n");
  EXPECT_EQ(c.program->origin().first_line, 17);
  EXPECT_EQ(c.program->origin().column_offset, 6);
  EXPECT_TRUE(c.fixture.empty());

  ASSERT_TRUE(c.compile.has_value());
  const CompileSpec& cs = *c.compile;
  EXPECT_EQ(cs.backend, "fused");
  EXPECT_TRUE(cs.fullgraph);
  EXPECT_FALSE(cs.dynamic.has_value());  // unset: automatic dynamic
  EXPECT_THAT(cs.mark_dynamic, ElementsAre(Pair("x", 0)));
  EXPECT_THAT(cs.mark_static, ElementsAre(Pair("y", 1)));
  EXPECT_THAT(cs.disallow_in_graph, ElementsAre("sub"));
  EXPECT_EQ(cs.cache_size_limit, 2);
  EXPECT_TRUE(cs.error_on_recompile);
  EXPECT_TRUE(cs.trace_once);
  ASSERT_EQ(cs.calls.size(), 2u);
  ASSERT_EQ(cs.calls[0].size(), 5u);  // every input, the overridden ones replaced
  EXPECT_EQ(cs.calls[0][0].shape, SizeVec({8}));
  EXPECT_EQ(cs.calls[0][0].init, "randn");
  EXPECT_EQ(cs.calls[0][2].values, std::vector<double>({1, 2, 3.5, -4}));
  EXPECT_EQ(cs.calls[1][2].values, std::vector<double>({5, 6, 7, 8}));
  EXPECT_EQ(cs.calls[1][2].shape, SizeVec({2, 2}));  // kept: the new values fit it

  const ExpectSpec& x = c.expect;
  EXPECT_THAT(*x.ops, ElementsAre("aten::add.Tensor", "aten::sub.Tensor", "aten::add.Tensor"));
  EXPECT_THAT(*x.ops_contain, ElementsAre("aten::sub.Tensor"));
  EXPECT_THAT(*x.ops_exclude, ElementsAre("aten::mul.Tensor"));
  EXPECT_THAT(*x.function_ops, ElementsAre("add", "sub", "add"));
  EXPECT_EQ(x.graphs, 2);
  EXPECT_FALSE(x.graph_break_count.has_value());
  ASSERT_TRUE(x.graph_breaks.has_value());
  ASSERT_EQ(x.graph_breaks->size(), 2u);
  EXPECT_EQ((*x.graph_breaks)[0].reason, "disallow");
  EXPECT_EQ((*x.graph_breaks)[1].reason, "another");
  EXPECT_EQ(x.recompiles, 1);
  EXPECT_EQ(x.fused_kernels, 1);
  ASSERT_TRUE(x.equivalent.has_value());
  EXPECT_FALSE(x.equivalent->bitwise);
  EXPECT_EQ(x.equivalent->hash, "hash_tensor");
  EXPECT_EQ(x.equivalent->rtol, 1e-6);
  EXPECT_EQ(x.equivalent->atol, 1e-5);
  EXPECT_EQ(x.check, "CHECK: aten::add.Tensor\n");
  EXPECT_EQ(x.check_graphs, "CHECK: graph");
  EXPECT_EQ(x.debug_string, "golden\n");
  EXPECT_EQ(x.debug_string_where.line, 45);
  EXPECT_EQ(x.debug_string_where.column, 21);
  EXPECT_EQ(x.error, "some (regex)+");
  ASSERT_TRUE(x.outputs.has_value());
  ASSERT_EQ(x.outputs->values.size(), 1u);
  ASSERT_EQ(x.outputs->values[0].size(), 3u);
  EXPECT_EQ(x.outputs->values[0][1], 2.5);
  EXPECT_EQ(x.outputs->values[0][2], -std::numeric_limits<double>::infinity());

  EXPECT_EQ(c.debug.hash, "norm");
  EXPECT_TRUE(c.debug.hash_inputs);
  EXPECT_TRUE(c.debug.record_ids);
  EXPECT_TRUE(c.debug.function_level);
  EXPECT_FALSE(c.debug.record_output);
  EXPECT_THAT(c.skip_if, ElementsAre("no_cuda"));
  EXPECT_EQ(c.xfail, "known bug");
  EXPECT_THAT(c.devices, ElementsAre("cpu", "cuda"));

  // The second case: defaults, and a fixture's default inputs.
  const CaseSpec& d = s.cases[1];
  EXPECT_EQ(d.dtype, DType::kFloat64);
  EXPECT_EQ(d.seed, 7u);
  EXPECT_THAT(d.devices, ElementsAre("cpu"));
  EXPECT_EQ(d.fixture, "loader_test_fixture");
  EXPECT_FALSE(d.program.has_value());
  EXPECT_FALSE(d.load_error.has_value());
  ASSERT_EQ(d.inputs.size(), 2u);
  EXPECT_EQ(d.inputs[0].name, "x");
  EXPECT_EQ(d.inputs[0].shape, SizeVec({2, 3}));
  EXPECT_EQ(d.inputs[1].name, "ids");
  EXPECT_EQ(d.inputs[1].dtype, DType::kInt64);
  EXPECT_EQ(d.inputs[1].init, "zeros");
  ASSERT_TRUE(d.compile.has_value());
  EXPECT_EQ(d.compile->backend, "aot_eager");  // from defaults
  EXPECT_EQ(d.expect.graph_break_count, 2);
  EXPECT_FALSE(d.expect.graph_breaks.has_value());
  ASSERT_TRUE(d.expect.equivalent.has_value());
  EXPECT_TRUE(d.expect.equivalent->bitwise);
  EXPECT_FALSE(d.expect.equivalent->rtol.has_value());
}

TEST(SpecLoader, DefaultsWhenKeysAreAbsent) {
  SuiteSpec s = load_ok(y(R"Y(
cases:
  - name: a
    inputs: {x: {shape: [2]}}
    program: return x
)Y"));
  EXPECT_EQ(s.name, "t");  // the file's stem
  ASSERT_EQ(s.cases.size(), 1u);
  const CaseSpec& c = s.cases[0];
  EXPECT_EQ(c.dtype, DType::kFloat32);
  EXPECT_EQ(c.seed, 0u);
  EXPECT_THAT(c.devices, ElementsAre("cpu"));
  EXPECT_FALSE(c.compile.has_value());
  EXPECT_FALSE(c.expect.ops.has_value());
  EXPECT_FALSE(c.expect.debug_string.has_value());
  EXPECT_TRUE(c.debug.record_output);
  EXPECT_FALSE(c.xfail.has_value());
  EXPECT_EQ(c.inputs[0].init, "randn");
}

TEST(SpecLoader, CompileForms) {
  SuiteSpec s = load_ok(y(R"Y(
defaults: {backend: fused}
cases:
  - {name: a, program: return 1, compile: true}
  - {name: b, program: return 1, compile: false}
  - {name: c, program: return 1, compile: {dynamic: true}}
  - name: d
    program: return 1
    compile:
)Y"));
  ASSERT_EQ(s.cases.size(), 4u);
  ASSERT_TRUE(s.cases[0].compile.has_value());
  EXPECT_EQ(s.cases[0].compile->backend, "fused");
  EXPECT_FALSE(s.cases[1].compile.has_value());
  EXPECT_TRUE(s.cases[2].compile->dynamic);
  EXPECT_TRUE(s.cases[3].compile.has_value());
}

TEST(SpecLoader, CompileModuleNeedsAFixtureAndCheckModuleNeedsIt) {
  SuiteSpec s = load_ok(y(R"Y(
cases:
  - {name: a, fixture: mlp, compile: {module: true}, expect: {check_module: "CHECK: MLP"}}
)Y"));
  EXPECT_TRUE(s.cases[0].compile->module);
  EXPECT_EQ(s.cases[0].expect.check_module, "CHECK: MLP");
  EXPECT_THAT(load_fails(y(R"Y(
cases:
  - {name: a, program: return 1, compile: {module: true}}
)Y")),
              HasSubstr("t.yaml:2:52: error: 'module: true' needs a module fixture (fixture: NAME), not a program"));
  EXPECT_THAT(load_fails(y(R"Y(
cases:
  - {name: a, fixture: mlp, expect: {check_module: "CHECK: MLP"}}
)Y")),
              HasSubstr("'check_module' reads what compile(module) made: it needs 'compile: {module: true}'"));
}

TEST(SpecLoader, EquivalentForms) {
  SuiteSpec s = load_ok(y(R"Y(
cases:
  - {name: a, program: return 1, expect: {equivalent: true}}
  - {name: b, program: return 1, expect: {equivalent: {bitwise: true}}}
  - {name: c, program: return 1, expect: {equivalent: {hash: bitwise}}}
)Y"));
  EXPECT_FALSE(s.cases[0].expect.equivalent->bitwise);
  EXPECT_EQ(s.cases[0].expect.equivalent->hash, "norm");
  EXPECT_TRUE(s.cases[1].expect.equivalent->bitwise);
  EXPECT_EQ(s.cases[2].expect.equivalent->hash, "bitwise");
}

TEST(SpecLoader, AutogradForms) {
  SuiteSpec s = load_ok(y(R"Y(
cases:
  - name: a
    inputs: {x: {shape: [2], requires_grad: true}, y: {shape: [2]}}
    program: return x
    expect: {gradcheck: true, ignore_ops: [aten::detach, sum]}
  - {name: b, program: return 1, expect: {gradcheck: {eps: 1e-3, atol: 0.5, rtol: 0}}}
  - {name: c, program: return 1, expect: {gradcheck: false}, compile: {backward_backend: eager}}
)Y"));
  EXPECT_EQ(s.cases[2].compile->backward_backend, "eager");
  EXPECT_EQ(s.cases[1].compile, std::nullopt);
  EXPECT_TRUE(s.cases[0].inputs[0].requires_grad);
  EXPECT_FALSE(s.cases[0].inputs[1].requires_grad);
  EXPECT_EQ(s.cases[0].expect.ignore_ops, (std::vector<std::string>{"aten::detach", "sum"}));
  EXPECT_EQ(s.cases[0].expect.gradcheck->eps, 1e-6);  // torch.autograd.gradcheck's defaults
  EXPECT_EQ(s.cases[0].expect.gradcheck->atol, 1e-5);
  EXPECT_EQ(s.cases[0].expect.gradcheck->rtol, 1e-3);
  EXPECT_EQ(s.cases[1].expect.gradcheck->eps, 1e-3);
  EXPECT_EQ(s.cases[1].expect.gradcheck->atol, 0.5);
  EXPECT_EQ(s.cases[1].expect.gradcheck->rtol, 0);
  EXPECT_FALSE(s.cases[2].expect.gradcheck.has_value());
}

TEST(SpecLoader, EmptyDebugStringIsEmptyGolden) {
  SuiteSpec s = load_ok(y(R"Y(
cases:
  - name: a
    program: return 1
    expect:
      debug_string:
)Y"));
  EXPECT_EQ(s.cases[0].expect.debug_string, "");
  EXPECT_EQ(s.cases[0].expect.debug_string_where.line, 5);
}

// ---- malformed input, one class at a time ----

TEST(SpecLoaderErrors, BadYaml) {
  EXPECT_EQ(load_fails("cases:\n  - name: \"a\" b\n"), "t.yaml:2:15: error: end of map not found");
  EXPECT_EQ(load_fails("cases: 1\na: b: c\n"), "t.yaml:2:5: error: illegal map value");
  EXPECT_EQ(load_fails("cases: [a, b\n"), "t.yaml:2:1: error: end of sequence flow not found");
  EXPECT_EQ(load_fails("cases:\n  - name: a\n   bad: indentation\n"), "t.yaml:3:4: error: end of sequence not found");
}

TEST(SpecLoaderErrors, NotASpecFile) {
  EXPECT_EQ(load_fails(""),
            "t.yaml:1:1: error: the file holds no YAML document; a spec file is a mapping with a "
            "'cases' list");
  EXPECT_EQ(load_fails("# only a comment\n"),
            "t.yaml:1:1: error: the file holds no YAML document; a spec file is a mapping with a 'cases' list");
  EXPECT_EQ(load_fails("- a\n- b\n"), "t.yaml:1:1: error: the top level must be a mapping, got a sequence");
  EXPECT_EQ(load_fails("suite: x\n"), "t.yaml:1:1: error: missing required key 'cases' at the top level");
  EXPECT_EQ(load_fails("cases: 3\n"), "t.yaml:1:8: error: 'cases' must be a list of cases, got an integer");
  EXPECT_EQ(load_fails("cases: []\n---\ncases: []\n"),
            "t.yaml:2:1: error: a spec file holds one YAML document; this starts a second one");
  EXPECT_EQ(load_fails("cases: []\n...\ncases: []\n"),
            "t.yaml:3:1: error: a spec file holds one YAML document; this starts a second one");
  EXPECT_TRUE(load_suite_string("%YAML 1.2\n---\n# c\ncases: []\n...\n", "t.yaml").ok());
  EXPECT_EQ(load_fails("schema: 2\ncases: []\n"),
            "t.yaml:1:9: error: unsupported schema version 2; this opspec reads schema 1");
  EXPECT_TRUE(load_suite_string("schema: 1\ncases: []\n", "t.yaml").ok());
}

TEST(SpecLoaderErrors, UnknownKeyAtEachLevel) {
  EXPECT_EQ(load_fails("cases: []\nsuit: x\n"),
            "t.yaml:2:1: error: unknown key 'suit' at the top level; did you mean 'suite'? (allowed: schema, suite, "
            "defaults, cases)");
  EXPECT_EQ(load_fails("defaults: {dtyp: f32}\ncases: []\n"),
            "t.yaml:1:12: error: unknown key 'dtyp' in defaults; did you mean 'dtype'? (allowed: dtype, seed, "
            "backend, device, devices, no_grad)");
  EXPECT_EQ(load_fails(str_cat(kHead, "    program: return 1\n    expcet: {}\n")),
            "t.yaml:4:5: error: unknown key 'expcet' in case 'c'; did you mean 'expect'? (allowed: name, "
            "description, inputs, program, fixture, compile, expect, debug, skip_if, xfail, devices, dtype, seed, bench, no_grad)");
  EXPECT_EQ(load_fails(str_cat(kHead, "    program: return x\n    inputs: {x: {shape: [1], int: ones}}\n")),
            "t.yaml:4:30: error: unknown key 'int' in input 'x' of case 'c'; did you mean 'init'? (allowed: shape, "
            "init, dtype, device, full, values, requires_grad, memory_format)");
  EXPECT_EQ(load_fails(str_cat(kHead, "    program: return x\n    inputs: {x: {shape: [1], init: {ful: 1}}}\n")),
            "t.yaml:4:37: error: unknown key 'ful' in init of input 'x' of case 'c'; did you mean 'full'? "
            "(allowed: full, values)");
  EXPECT_EQ(load_fails(str_cat(kHead, "    program: return 1\n    compile: {backned: fused}\n")),
            "t.yaml:4:15: error: unknown key 'backned' in compile of case 'c'; did you mean 'backend'? (allowed: "
            "backend, backward_backend, fullgraph, dynamic, static, disallow_in_graph, cache_size_limit, "
            "error_on_recompile, trace_once, "
            "calls, module)");
  EXPECT_THAT(load_fails(str_cat(kHead, "    program: return 1\n    expect:\n      opps: []\n")),
              HasSubstr("t.yaml:5:7: error: unknown key 'opps' in expect of case 'c'; did you mean 'ops'? (allowed: "
                        "ops, ops_contain,"));
  EXPECT_EQ(load_fails(str_cat(kHead, "    program: return 1\n    expect: {equivalent: {rtl: 1, atol: 1}}\n")),
            "t.yaml:4:27: error: unknown key 'rtl' in equivalent; did you mean 'rtol'? (allowed: bitwise, hash, "
            "rtol, atol, equal_nan)");
  EXPECT_EQ(load_fails(str_cat(kHead, "    program: return 1\n    expect: {graph_breaks: [{reson: x}]}\n")),
            "t.yaml:4:30: error: unknown key 'reson' in a graph_breaks entry; did you mean 'reason'? (allowed: "
            "reason)");
  EXPECT_EQ(load_fails(str_cat(kHead, "    program: return 1\n    debug: {hashes: norm}\n")),
            "t.yaml:4:13: error: unknown key 'hashes' in debug of case 'c'; did you mean 'hash'? (allowed: hash, "
            "hash_inputs, record_ids, function_level, record_output, record_nn_module)");
  // No suggestion when nothing is close.
  EXPECT_EQ(load_fails("cases: []\nzzzzzz: 1\n"),
            "t.yaml:2:1: error: unknown key 'zzzzzz' at the top level (allowed: schema, suite, defaults, cases)");
}

TEST(SpecLoaderErrors, ABadCaseFailsAloneAndTheOthersLoad) {
  // Issue 22: one typo'd key rejected the whole file, hiding its good cases.
  auto s = load_suite_string(
      "cases:\n"
      "  - name: good\n"
      "    program: return 1\n"
      "  - name: typo\n"
      "    program: return 1\n"
      "    expcet: {ops: []}\n"
      "  - {program: return 1, seed: -1}\n"
      "  - 7\n"
      "  - name: also_good\n"
      "    program: return 2\n",
      "t.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->cases.size(), 5u);
  EXPECT_EQ(s->cases[0].name, "good");
  EXPECT_FALSE(s->cases[0].spec_error);
  EXPECT_EQ(s->cases[1].name, "typo");
  ASSERT_TRUE(s->cases[1].spec_error);
  EXPECT_THAT(*s->cases[1].spec_error, testing::StartsWith("t.yaml:6:5: error: unknown key 'expcet' in case 'typo'"));
  EXPECT_EQ(s->cases[2].name, "case_3");  // no name: named by its place
  ASSERT_TRUE(s->cases[2].spec_error);
  EXPECT_THAT(*s->cases[2].spec_error, HasSubstr("t.yaml:7:"));
  EXPECT_EQ(s->cases[3].name, "case_4");
  EXPECT_THAT(s->cases[3].spec_error.value_or(""), HasSubstr("t.yaml:8:"));
  EXPECT_EQ(s->cases[4].name, "also_good");
  EXPECT_FALSE(s->cases[4].spec_error);
  // Outside the cases, a mistake still rejects the file, naming its line.
  EXPECT_THAT(load_fails("cases: []\nsuit: x\n"), testing::StartsWith("t.yaml:2:1: error: unknown key 'suit'"));
  EXPECT_THAT(load_fails("cases:\n  - {name: a, program: return 1}\n  - {name: a, program: return 2}\n"),
              HasSubstr("duplicate case name 'a'"));
}

TEST(SpecLoaderErrors, DuplicateKey) {
  EXPECT_EQ(load_fails(str_cat(kHead, "    program: return 1\n    program: return 2\n")),
            "t.yaml:4:5: error: duplicate key 'program' in case 'c' (first at line 3, column 5)");
}

TEST(SpecLoaderErrors, WrongType) {
  auto with = [](std::string_view line) { return load_fails(str_cat(kHead, "    program: return 1\n", line)); };
  EXPECT_EQ(with("    expect: {graphs: \"2\"}\n"), "t.yaml:4:22: error: 'graphs' must be an integer, got a string");
  EXPECT_EQ(with("    expect: {graphs: two}\n"), "t.yaml:4:22: error: 'graphs' must be an integer, got a string");
  EXPECT_EQ(with("    expect: {graphs: [2]}\n"), "t.yaml:4:22: error: 'graphs' must be an integer, got a sequence");
  EXPECT_EQ(with("    expect: {graphs: 2.0}\n"), "t.yaml:4:22: error: 'graphs' must be an integer, got a float");
  EXPECT_EQ(with("    expect: {graphs: -1}\n"), "t.yaml:4:22: error: 'graphs' must be non-negative, got -1");
  EXPECT_EQ(with("    expect: {graphs: 99999999999999999999}\n"),
            "t.yaml:4:22: error: 'graphs' is out of range: 99999999999999999999 is not in [0, 2147483647]");
  EXPECT_EQ(with("    expect: {ops: aten::add}\n"),
            "t.yaml:4:19: error: 'ops' must be a list of strings, got a string");
  EXPECT_EQ(with("    expect: {ops: [[a]]}\n"),
            "t.yaml:4:20: error: an entry of 'ops' must be a string, got a sequence");
  EXPECT_EQ(with("    compile: {fullgraph: 1}\n"),
            "t.yaml:4:26: error: 'fullgraph' must be a boolean (true or false), got an integer");
  EXPECT_EQ(with("    expect: [ops]\n"), "t.yaml:4:13: error: 'expect' must be a mapping, got a sequence");
  EXPECT_EQ(with("    xfail: [a]\n"), "t.yaml:4:12: error: 'xfail' must be a string, got a sequence");
  EXPECT_EQ(with("    expect: {outputs: [1, x]}\n"),
            "t.yaml:4:27: error: an entry of 'outputs' must be a number, got a string");
  EXPECT_EQ(with("    expect: {graph_breaks: {reason: x}}\n"),
            "t.yaml:4:28: error: 'graph_breaks' must be an integer or a list of {reason: ...}, got a mapping");
  EXPECT_EQ(with("    expect: {graph_breaks: [[x]]}\n"),
            "t.yaml:4:29: error: 'graph_breaks' entries must be {reason: ...} or strings, got a sequence");
  EXPECT_EQ(with("    expect: {equivalent: close}\n"),
            "t.yaml:4:26: error: 'equivalent' must be 'bitwise', true or a mapping {hash, rtol, atol, equal_nan}, "
            "got a string 'close'");
  EXPECT_EQ(load_fails("cases:\n  - just a string\n"), "t.yaml:2:5: error: case #1 must be a mapping, got a string");
}

TEST(SpecLoaderErrors, MissingRequiredKeys) {
  EXPECT_EQ(load_fails("cases:\n  - program: return 1\n"), "t.yaml:2:5: error: missing required key 'name' in case #1");
  EXPECT_EQ(load_fails("cases:\n  - name: a\n    description: no program\n"),
            "t.yaml:2:5: error: case 'a' needs 'program' or 'fixture'");
  EXPECT_EQ(load_fails("cases:\n  - name: a\n    program: return 1\n    fixture: loader_test_fixture\n"),
            "t.yaml:4:5: error: case 'a' has both 'program' and 'fixture'; give one");
  EXPECT_EQ(load_fails(str_cat(kHead, "    program: return x\n    inputs: {x: {init: ones}}\n")),
            "t.yaml:4:17: error: missing required key 'shape' in input 'x' of case 'c'");
}

TEST(SpecLoaderErrors, DuplicateCaseNames) {
  EXPECT_EQ(load_fails(y(R"Y(
cases:
  - name: a
    program: return 1
  - name: b
    program: return 1
  - name: a
    program: return 2
)Y")),
            "t.yaml:6:5: error: duplicate case name 'a' (first at t.yaml:2:5)");
  EXPECT_EQ(load_fails("cases:\n  - {name: 'a b', program: return 1}\n"),
            "t.yaml:2:12: error: case name 'a b' must be non-empty and use only letters, digits, '_', '-' and '.'");
}

TEST(SpecLoaderErrors, BadShape) {
  auto input = [](std::string_view spec) {
    return load_fails(str_cat(kHead, "    program: return x\n    inputs:\n      x: ", spec, "\n"));
  };
  EXPECT_EQ(input("{shape: [2, -1]}"), "t.yaml:5:22: error: shape dim -1 is negative");
  EXPECT_EQ(input("{shape: [2.5]}"), "t.yaml:5:19: error: shape dims must be integers, got a float");
  EXPECT_EQ(input("{shape: 4}"), "t.yaml:5:18: error: 'shape' must be a list of non-negative integers, got an integer");
  EXPECT_EQ(input("{shape: [99999999999999999999]}"),
            "t.yaml:5:19: error: shape dim 99999999999999999999 is out of range");
  EXPECT_EQ(input("{shape: [65536, 65536, 65536]}"),
            "t.yaml:5:18: error: shape [65536, 65536, 65536] has more than 268435456 elements, the most a spec input "
            "may have");
  EXPECT_EQ(input("[4]"), "t.yaml:5:10: error: input 'x' must be a mapping, got a sequence");
}

TEST(SpecLoaderErrors, BadInit) {
  auto input = [](std::string_view spec) {
    return load_fails(str_cat(kHead, "    program: return x\n    inputs:\n      x: ", spec, "\n"));
  };
  EXPECT_EQ(input("{shape: [2, 3], values: [1, 2, 3, 4, 5]}"),
            "t.yaml:5:34: error: init values has 5 elements but shape [2, 3] needs 6");
  EXPECT_EQ(input("{shape: [2, 3], init: {values: [1, 2, 3, 4, 5]}}"),
            "t.yaml:5:41: error: init values has 5 elements but shape [2, 3] needs 6");
  EXPECT_EQ(input("{shape: [2], init: randx}"),
            "t.yaml:5:29: error: unknown init 'randx'; did you mean 'randn'? (allowed: randn, rand, zeros, ones, "
            "arange, full, values)");
  EXPECT_EQ(input("{shape: [2], init: full}"),
            "t.yaml:5:29: error: init 'full' needs its value: write init: {full: 2.5}");
  EXPECT_EQ(input("{shape: [2], init: ones, full: 1}"),
            "t.yaml:5:10: error: give one of 'init', 'full', 'values' in input 'x' of case 'c'");
  EXPECT_EQ(input("{shape: [2], full: many}"), "t.yaml:5:29: error: 'full' must be a number, got a string");
  EXPECT_EQ(input("{shape: [2], dtype: f33}"),
            "t.yaml:5:30: error: unknown dtype 'f33'; did you mean 'f32'? (allowed: f32, f64, f16, bf16, i64, i32, "
            "b8, or torch names like float32)");
  EXPECT_EQ(input("{shape: [2], device: gpu}"),
            "t.yaml:5:31: error: unknown device 'gpu' (allowed: cpu, cuda, cuda:N, meta)");
  EXPECT_EQ(load_fails(str_cat(kHead, "    program: return 1\n    inputs: {\"a b\": {shape: [1]}}\n")),
            "t.yaml:4:14: error: input name 'a b' is not an identifier (letters, digits, '_')");
  // Values without a shape are 1-d.
  SuiteSpec s = load_ok(str_cat(kHead, "    program: return x\n    inputs: {x: {values: [1, 2, 3]}}\n"));
  EXPECT_EQ(s.cases[0].inputs[0].shape, SizeVec({3}));
}

TEST(SpecLoaderErrors, BadEnumValues) {
  auto with = [](std::string_view line) { return load_fails(str_cat(kHead, "    program: return 1\n", line)); };
  EXPECT_EQ(with("    skip_if: [nocuda]\n"),
            "t.yaml:4:14: error: unknown skip_if condition 'nocuda'; did you mean 'no_cuda'? (allowed: always, "
            "cuda, no_cuda, no_gpu)");
  EXPECT_EQ(with("    devices: [cpu, tpu]\n"),
            "t.yaml:4:20: error: unknown device 'tpu' (allowed: cpu, cuda, cuda:N, meta)");
  EXPECT_EQ(with("    devices: []\n"), "t.yaml:4:14: error: 'devices' must not be empty");
  EXPECT_EQ(with("    dtype: float33\n"),
            "t.yaml:4:12: error: unknown dtype 'float33'; did you mean 'float32'? (allowed: f32, f64, f16, bf16, i64, "
            "i32, b8, or torch names like float32)");
  EXPECT_EQ(with("    debug: {hash: sha}\n"),
            "t.yaml:4:19: error: unknown hash 'sha' (allowed: norm, hash_tensor, bitwise)");
  EXPECT_EQ(with("    expect: {error: \"(unclosed\"}\n"),
            "t.yaml:4:21: error: 'error' is not a valid regular expression: missing ): (unclosed");
}

TEST(SpecLoaderErrors, ToleranceNeedsBoth) {
  auto with = [](std::string_view line) { return load_fails(str_cat(kHead, "    program: return 1\n", line)); };
  EXPECT_EQ(with("    expect: {equivalent: {rtol: 1e-6}}\n"),
            "t.yaml:4:27: error: 'rtol' given without 'atol': give both or neither");
  EXPECT_EQ(with("    expect: {equivalent: {atol: 1e-6}}\n"),
            "t.yaml:4:27: error: 'atol' given without 'rtol': give both or neither");
  EXPECT_EQ(with("    expect: {equivalent: {rtol: -1, atol: 0}}\n"), "t.yaml:4:33: error: 'rtol' must be non-negative");
  EXPECT_EQ(with("    expect: {equivalent: {rtol: .nan, atol: 0}}\n"),
            "t.yaml:4:33: error: 'rtol' must be finite, got .nan");
  EXPECT_EQ(with("    expect: {equivalent: {bitwise: true, rtol: 0, atol: 0}}\n"),
            "t.yaml:4:26: error: 'bitwise' excludes 'rtol' and 'atol'");
}

TEST(SpecLoaderErrors, BadAutogradKeys) {
  auto with = [](std::string_view line) { return load_fails(str_cat(kHead, "    program: return 1\n", line)); };
  EXPECT_EQ(with("    expect: {gradcheck: {eps: 0}}\n"), "t.yaml:4:31: error: 'eps' must be positive");
  EXPECT_EQ(with("    expect: {gradcheck: {atol: -1}}\n"), "t.yaml:4:32: error: 'atol' must be non-negative");
  EXPECT_THAT(with("    expect: {gradcheck: {step: 1}}\n"), HasSubstr("unknown key 'step' in gradcheck"));
  EXPECT_THAT(with("    expect: {ignore_ops: aten::detach}\n"), HasSubstr("'ignore_ops' must be a list"));
  EXPECT_THAT(load_fails(str_cat(kHead, "    inputs: {x: {shape: [2], requires_grad: yes please}}\n    program: return x\n")),
              HasSubstr("'requires_grad' must be a bool"));
}

TEST(SpecLoaderErrors, BadDynamicMark) {
  auto with = [](std::string_view compile) {
    return load_fails(
        str_cat(kHead, "    inputs: {x: {shape: [4]}}\n    program: return x\n    compile: ", compile, "\n"));
  };
  EXPECT_EQ(with("{dynamic: [x0]}"),
            "t.yaml:5:25: error: 'dynamic' entry 'x0' must be NAME.DIM with a non-negative DIM, e.g. x.0");
  EXPECT_EQ(with("{dynamic: [x.-1]}"),
            "t.yaml:5:25: error: 'dynamic' entry 'x.-1' must be NAME.DIM with a non-negative DIM, e.g. x.0");
  EXPECT_EQ(with("{dynamic: [y.0]}"),
            "t.yaml:5:25: error: 'dynamic' entry 'y.0': 'y' is not an input of case 'c' (inputs: x)");
  EXPECT_EQ(with("{dynamic: [x.0, x.1]}"),
            "t.yaml:5:30: error: 'dynamic' entry 'x.1': dim 1 is out of range for input 'x' of shape [4]");
  EXPECT_EQ(with("{static: [x.3]}"),
            "t.yaml:5:24: error: 'static' entry 'x.3': dim 3 is out of range for input 'x' of shape [4]");
  EXPECT_EQ(with("{dynamic: x.0}"),
            "t.yaml:5:24: error: 'dynamic' must be a boolean or a list of NAME.DIM marks (e.g. [x.0]), got a string");
  EXPECT_EQ(with("{calls: [{y: {shape: [2]}}]}"), "t.yaml:5:24: error: 'y' is not an input of case 'c' (inputs: x)");
  EXPECT_EQ(with("{calls: [{x: {values: [1, 2]}}], cache_size_limit: -2}"),
            "t.yaml:5:65: error: 'cache_size_limit' is out of range: -2 is not in [1, 1048576]");
}

TEST(SpecLoaderErrors, ManyErrorsAreReportedTogetherSortedByPosition) {
  // Two cases with errors of their own, loaded with and without file errors around them.
  const std::string bad_cases =
      "  - name: a\n"
      "    program: return 1\n"
      "    expect: {graphs: x, recompiles: y}\n"
      "  - name: b\n"
      "    fixture: 3\n"
      "    program: return 1\n"
      "    inputs: {x: {shape: [-1]}}\n";
  const std::string msg = load_fails(
      str_cat("defaults: {dtype: f33}\ncases:\n", bad_cases, "  - name: a\n    program: return 1\nzzz: 1\n"));
  // The file's own errors reject it; each case's errors stay with the case.
  EXPECT_EQ(msg,
            "t.yaml:1:19: error: unknown dtype 'f33'; did you mean 'f32'? (allowed: f32, f64, f16, bf16, i64, i32, "
            "b8, or torch names like float32)\n"
            "t.yaml:10:5: error: duplicate case name 'a' (first at t.yaml:3:5)\n"
            "t.yaml:12:1: error: unknown key 'zzz' at the top level (allowed: schema, suite, defaults, cases)");
  EXPECT_EQ(load_fails(str_cat("cases:\n", bad_cases)),
            "t.yaml:4:22: error: 'graphs' must be an integer, got a string\n"
            "t.yaml:4:37: error: 'recompiles' must be an integer, got a string\n"
            "t.yaml:6:5: error: case 'b' has both 'program' and 'fixture'; give one\n"
            "t.yaml:8:26: error: shape dim -1 is negative");
}

TEST(SpecLoaderErrors, ErrorsAreCapped) {
  std::string text = "cases: []\n";
  for (int i = 0; i < 30; ++i) text += str_cat("zz", i, ": 1\n");
  std::string msg = load_fails(text);
  EXPECT_EQ(std::count(msg.begin(), msg.end(), '\n'), kMaxReportedErrors);
  EXPECT_THAT(msg, HasSubstr("\nt.yaml: error: 10 more errors not shown"));
}

// ---- case-level errors: the case loads with load_error set ----

TEST(SpecLoaderCaseErrors, UnknownOpPointsIntoTheYamlFile) {
  SuiteSpec s = load_ok(y(R"Y(
cases:
  - name: block
    inputs: {x: {shape: [4]}}
    program: |
      a = add(x, 1)
      b = frobnicate(a)
      return b
  - name: quoted
    inputs: {x: {shape: [4]}}
    program: "return frobnicate(x)"
  - name: plain
    inputs: {x: {shape: [4]}}
    program: return frobnicate(x)
  - name: indicator
    inputs: {x: {shape: [4]}}
    program: |2
          return frobnicate(x)
)Y"));
  ASSERT_EQ(s.cases.size(), 4u);
  EXPECT_EQ(s.cases[0].load_error, "t.yaml:6:11: unknown op 'frobnicate'");
  EXPECT_EQ(s.cases[1].load_error, "t.yaml:10:22: unknown op 'frobnicate'");
  EXPECT_EQ(s.cases[2].load_error, "t.yaml:13:21: unknown op 'frobnicate'");
  EXPECT_EQ(s.cases[3].load_error, "t.yaml:17:18: unknown op 'frobnicate'");
  EXPECT_FALSE(s.cases[0].program.has_value());
}

TEST(SpecLoaderCaseErrors, UndefinedName) {
  SuiteSpec s = load_ok(y(R"Y(
cases:
  - name: a
    inputs: {x: {shape: [4]}}
    program: |
      y = relu(x)
      return add(y, z)
)Y"));
  EXPECT_EQ(s.cases[0].load_error, "t.yaml:6:21: undefined name 'z'");
}

TEST(SpecLoaderCaseErrors, SyntaxErrorKeepsTheCaseAndItsExpectation) {
  SuiteSpec s = load_ok(y(R"Y(
cases:
  - name: a
    program: |
      y = add(1, 2
    expect: {error: "expected"}
)Y"));
  ASSERT_TRUE(s.cases[0].load_error.has_value());
  EXPECT_THAT(*s.cases[0].load_error, testing::StartsWith("t.yaml:4:"));
  EXPECT_EQ(s.cases[0].expect.error, "expected");
}

TEST(SpecLoaderCaseErrors, UnknownFixture) {
  SuiteSpec s = load_ok("cases:\n  - name: a\n    fixture: loader_test_fixtur\n");
  ASSERT_TRUE(s.cases[0].load_error.has_value());
  EXPECT_THAT(*s.cases[0].load_error,
              testing::StartsWith("t.yaml:3:14: unknown fixture 'loader_test_fixtur'; did you mean "
                                  "'loader_test_fixture'? (registered: "));
}

TEST(SpecLoaderCaseErrors, FixtureInputsMustMatch) {
  SuiteSpec s = load_ok(y(R"Y(
cases:
  - name: reordered
    fixture: loader_test_fixture
    inputs: {ids: {shape: [4], dtype: i64}, x: {shape: [2, 3]}}
  - name: wrong
    fixture: loader_test_fixture
    inputs: {x: {shape: [2, 3]}}
)Y"));
  EXPECT_FALSE(s.cases[0].load_error.has_value());
  EXPECT_EQ(s.cases[0].inputs[0].name, "x");  // the fixture's order
  EXPECT_EQ(s.cases[0].inputs[1].name, "ids");
  EXPECT_EQ(s.cases[1].load_error,
            "t.yaml:6:14: fixture 'loader_test_fixture' takes inputs (x, ids) but the case gives (x)");
}

// ---- hostile input: errors, never crashes or hangs ----

TEST(SpecLoaderRobustness, HostileInputs) {
  EXPECT_THAT(load_fails(std::string(100000, '[')), HasSubstr("nesting deeper than 64 levels"));
  EXPECT_THAT(load_fails(std::string(100000, '{')), HasSubstr("nesting deeper than 64 levels"));
  std::string dashes;
  for (int i = 0; i < 1000; ++i) dashes += "- ";
  EXPECT_THAT(load_fails(dashes), HasSubstr("nesting deeper than 64 levels"));
  // Behind an anchor or a tag, brackets still nest.
  EXPECT_THAT(load_fails("cases: &a " + std::string(1000, '[')), HasSubstr("nesting deeper than 64 levels"));
  EXPECT_THAT(load_fails("cases: !!seq " + std::string(1000, '{')), HasSubstr("nesting deeper than 64 levels"));
  // An alias cycle is just a value of the wrong type.
  EXPECT_EQ(load_fails("cases: &a [*a]\n"), "t.yaml:1:8: error: case #1 must be a mapping, got a sequence");
  EXPECT_EQ(load_fails("cases:\n  - &c {name: a, program: return 1, expect: {ops: [*c]}}\n"),
            "t.yaml:2:5: error: an entry of 'ops' must be a string, got a mapping");
  // yaml-cpp's LoadAll never returns on these (yaml-cpp issue #1040).
  load_fails(",");
  load_fails("cases: []\n,\n");
  load_fails("\n,\n- a\n");
  // Binary junk, NUL bytes, a byte-order mark, tabs.
  load_fails(std::string("\0\x01\x02\xff\xfe", 5));
  load_fails("cases:\n\t- name: a\n");
  EXPECT_TRUE(load_suite_string("\xEF\xBB\xBF"
                                "cases: []\n",
                                "t.yaml")
                  .ok());
  load_fails("? [a]\n: b\ncases: []\n");
  load_fails("cases: [!!binary xyz]\n");
  load_fails("*unknown_alias\n");
  load_fails("cases:\n  - name: a\n    program: return 1\n    inputs: {x: {shape: [1], full: 1e999}}\n");
}

TEST(SpecLoaderRobustness, BigFilesLoadInLinearTime) {
  std::string text = "cases:\n";
  for (int i = 0; i < 3000; ++i) {
    text += str_cat("  - name: c", i,
                    "\n    inputs: {x: {shape: [2]}}\n    program: return x\n"
                    "    expect: {ops: [], graphs: 1}\n");
  }
  text += "  - name: wide\n    program: return 1\n    inputs:\n";
  for (int i = 0; i < 20000; ++i) text += str_cat("      x", i, ": {shape: [1]}\n");
  SuiteSpec s = load_ok(text);
  ASSERT_EQ(s.cases.size(), 3001u);
  EXPECT_EQ(s.cases.back().inputs.size(), 20000u);
}

TEST(SpecLoaderRobustness, AnchorsAndAliasesWork) {
  SuiteSpec s = load_ok(y(R"Y(
cases:
  - name: a
    inputs: &in {x: {shape: [2]}}
    program: return x
  - name: b
    inputs: *in
    program: return x
)Y"));
  ASSERT_EQ(s.cases.size(), 2u);
  EXPECT_EQ(s.cases[1].inputs[0].shape, SizeVec({2}));
}

// ---- files and directories ----

TEST(SpecLoaderFiles, DirectoriesAreSearchedRecursivelyInSortedOrder) {
  auto files = find_spec_files({(kTestdata / "tree").string()});
  ASSERT_TRUE(files.ok()) << files.status();
  std::vector<std::string> rel;
  for (const std::string& f : *files) rel.push_back(std::filesystem::relative(f, kTestdata).string());
  EXPECT_THAT(rel, ElementsAre("tree/a.yml", "tree/b.yaml", "tree/sub/a.yaml", "tree/sub/c.yaml"));

  auto suites = load_suites({(kTestdata / "tree").string(), (kTestdata / "tree" / "b.yaml").string()});
  ASSERT_TRUE(suites.ok()) << suites.status();
  std::vector<std::string> names;
  for (const SuiteSpec& s : *suites) names.push_back(s.name);
  EXPECT_THAT(names, ElementsAre("a", "b", "zz", "c"));  // b.yaml once
}

TEST(SpecLoaderFiles, MissingPathIsAnError) {
  auto s = load_suites({(kTestdata / "no_such_dir").string()});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.status().message(), HasSubstr("no_such_dir: error: no such file or directory"));
  EXPECT_EQ(load_suite_file((kTestdata / "nope.yaml").string()).status().code(), absl::StatusCode::kNotFound);
}

TEST(SpecLoaderFiles, ErrorsOfAllFilesAndDuplicateSuiteNames) {
  std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "spec_loader_files";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "x");
  std::ofstream(dir / "bad1.yaml") << "cases: 1\n";
  std::ofstream(dir / "bad2.yaml") << "cases: [\n";
  std::ofstream(dir / "same.yaml") << "cases: []\n";
  std::ofstream(dir / "x" / "same.yaml") << "cases: []\n";
  auto s = load_suites({dir.string()});
  ASSERT_FALSE(s.ok());
  std::string msg(s.status().message());
  EXPECT_THAT(msg, HasSubstr(str_cat((dir / "bad1.yaml").string(), ":1:8: error: 'cases' must be a list")));
  EXPECT_THAT(msg, HasSubstr(str_cat((dir / "bad2.yaml").string(), ":2:1: error: end of sequence flow not found")));
  EXPECT_THAT(msg, HasSubstr(str_cat((dir / "x" / "same.yaml").string(),
                                     ": error: suite name 'same' is also the name of ", (dir / "same.yaml").string())));
}

// Brackets in quoted, plain and block scalars and in comments are text, not
// nesting: 70 cases with `"shape '\\[3"` were once rejected as "nesting deeper
// than 64 levels" (issue 21.7).
TEST(SpecLoaderRobustness, BracketsInScalarsAndCommentsAreNotNesting) {
  std::string text = "cases:\n";
  for (int i = 0; i < 70; ++i) {
    absl::StrAppend(&text, "  - name: c", i, "\n    program: \"return ones([2])\"  # [[ not nesting\n",
                    "    doc: shape '[3 and [4\n    note: \"shape '\\\\[3\"\n    also: 'it''s [ ['\n");
  }
  text += "  - name: block\n    program: return ones([2])\n    check: |\n      [[[[[[[[\n      {{{{\n";
  // The keys doc/note/also are unknown to a case: the errors must be about them, not about nesting.
  const std::string errors = load_fails(text);
  EXPECT_THAT(errors, Not(HasSubstr("nesting")));
  EXPECT_THAT(errors, HasSubstr("unknown key 'doc'"));
  // And with only known keys, the same brackets load.
  std::string ok = "cases:\n";
  for (int i = 0; i < 70; ++i) {
    absl::StrAppend(&ok, "  - name: c", i, "\n    program: return ones([2])  # [[ {{\n",
                    "    expect: {error: \"shape '\\\\[3\"}\n");
  }
  EXPECT_EQ(load_ok(ok).cases.size(), 70u);
}

// Two files with one `suite:` make two results with one id: both the loader
// and `opspec run` (which loads file by file) refuse the later one, naming the
// `suite:` lines (issue 21.8).
TEST(SpecLoaderFiles, DuplicateSuiteNamesNameBothLines) {
  SuiteSpec a = load_ok("suite: s\ncases: []\n");
  a.file = "a.yaml";
  SuiteSpec b = load_ok("# b\nsuite: s\ncases: []\n");
  b.file = "b.yaml";
  SuiteSpec c = load_ok("suite: other\ncases: []\n");
  std::vector<DuplicateSuite> d = duplicate_suites({a, c, b});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].index, 2u);
  EXPECT_THAT(d[0].message, HasSubstr("b.yaml:2: error: suite name 's' is also the name of a.yaml:1"));
}

}  // namespace
}  // namespace opspec::spec
