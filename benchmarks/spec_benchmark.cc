// spec_benchmark.cc: spec-suite throughput: 1000 small generated cases
// (op sequences, output values, FileCheck over debug strings, compiled runs
// with the eager, aot_eager and fused backends, graph breaks, recompiles)
// loaded from YAML text and run in-process, one iteration loading and
// running them all. The YAML is generated once, outside the timed loop.
#include <benchmark/benchmark.h>

#include <string>

#include "harness/spec/runner.h"
#include "harness/spec/spec_loader.h"

namespace opspec::spec {
namespace {

constexpr int kCaseTemplates = 10;

// generated_case: the i-th case, one of kCaseTemplates kinds; i varies its
// shapes and constants so the cases are not copies of each other.
std::string generated_case(int i) {
  const int n = 2 + i % 7;  // sizes 2..8
  const int k = i % 5 + 1;
  const std::string name = str_cat("case_", i);
  switch (i % kCaseTemplates) {
    case 0:  // the exact op sequence
      return str_cat("  - name: ", name, "\n    inputs: {x: {shape: [", n, "]}}\n", "    program: |\n",
                          "      a = add(x, ", k, ")\n      b = mul(a, x)\n      return relu(b)\n",
                          "    expect:\n      ops: [aten::add.Tensor, aten::mul.Tensor, aten::relu]\n");
    case 1:  // output values
      return str_cat("  - name: ", name, "\n    inputs: {x: {shape: [3], values: [", k, ", -1, 2]}}\n",
                          "    program: |\n      a = mul(x, 2)\n      return sub(a, 1)\n",
                          "    expect:\n      outputs: [", 2 * k - 1, ", -3, 3]\n");
    case 2:  // FileCheck over the eager debug string
      return str_cat("  - name: ", name, "\n    inputs: {x: {shape: [", n, ", 3]}}\n",
                          "    program: |\n      a = sin(x)\n      return exp(a)\n", "    expect:\n      check: |\n",
                          "        CHECK: aten::sin(t: f32[", n, ", 3])\n        CHECK-NEXT: aten::exp\n");
    case 3:  // eager backend, bitwise equivalence
      return str_cat("  - name: ", name, "\n    inputs: {x: {shape: [", n, ", 4]}, y: {shape: [", n, ", 4]}}\n",
                          "    program: |\n      a = mul(x, y)\n      b = sigmoid(a)\n      return sub(b, x, alpha=",
                          k, ")\n", "    compile: {backend: eager}\n",
                          "    expect:\n      graphs: 1\n      graph_breaks: 0\n      equivalent: bitwise\n");
    case 4:  // fused backend: one kernel, bitwise
      return str_cat("  - name: ", name, "\n    inputs: {x: {shape: [", 4 * n, "]}}\n",
                          "    program: |\n      a = relu(x)\n      b = mul(a, ", k,
                          ")\n      c = add(b, 1)\n      return tanh(c)\n", "    compile: {backend: fused}\n",
                          "    expect:\n      graphs: 1\n      fused_kernels: 1\n      equivalent: bitwise\n");
    case 5:  // matrix product, aot_eager
      return str_cat("  - name: ", name, "\n    inputs: {x: {shape: [", n, ", 4]}, w: {shape: [4, ", n,
                          "]}}\n", "    program: |\n      h = mm(x, w)\n      return relu(h)\n",
                          "    compile: {backend: aot_eager}\n",
                          "    expect:\n      ops: [aten::mm, aten::relu]\n      equivalent: {}\n");
    case 6:  // a graph break splits the program
      return str_cat("  - name: ", name, "\n    inputs: {x: {shape: [", n, "]}}\n",
                          "    program: |\n      a = add(x, ", k, ")\n      graph_break()\n      return neg(a)\n",
                          "    compile: {}\n",
                          "    expect:\n      graphs: 2\n      graph_breaks: [graph_break]\n      equivalent: bitwise\n");
    case 7:  // a new shape recompiles
      return str_cat("  - name: ", name, "\n    inputs: {x: {shape: [", n, "]}}\n",
                          "    program: |\n      return cos(x)\n", "    compile:\n      calls: [{x: {shape: [", n + 1,
                          "]}}]\n", "    expect:\n      graphs: 1\n      recompiles: 1\n");
    case 8:  // a reduction, checked against its value
      return str_cat("  - name: ", name, "\n    inputs: {x: {shape: [2, ", n, "], init: ones}}\n",
                          "    program: |\n      return sum(x)\n",
                          "    expect:\n      ops: [aten::sum]\n      outputs: [", 2 * n, "]\n");
    default:  // FileCheck over a compiled (fused) run's debug string
      return str_cat("  - name: ", name, "\n    inputs: {x: {shape: [", n, ", 2]}}\n",
                          "    program: |\n      a = abs(x)\n      return mul(a, a)\n",
                          "    compile: {backend: fused}\n", "    expect:\n      check: |\n",
                          "        CHECK: [fused] fused_abs_mul_0(\n        CHECK-NOT: aten::\n");
  }
}

std::string generated_suite(int cases) {
  std::string yaml = "schema: 1\nsuite: generated\ncases:\n";
  for (int i = 0; i < cases; ++i) yaml += generated_case(i);
  return yaml;
}

void BM_SpecSuite(benchmark::State& state) {
  const int cases = static_cast<int>(state.range(0));
  const std::string yaml = generated_suite(cases);
  for (auto _ : state) {
    absl::StatusOr<SuiteSpec> suite = load_suite_string(yaml, "generated.yaml");
    if (!suite.ok()) {
      state.SkipWithError(std::string(suite.status().message()).c_str());
      return;
    }
    const std::vector<CaseRef> refs = expand_cases(*suite);
    if (static_cast<int>(refs.size()) != cases) {
      state.SkipWithError("the generated suite has the wrong number of cases");
      return;
    }
    for (const CaseRef& ref : refs) {
      const CaseResult r = run_case(ref);
      if (r.outcome != Outcome::kPassed) {
        state.SkipWithError(str_cat(r.id, " ", outcome_name(r.outcome), ": ", r.message).c_str());
        return;
      }
    }
  }
  state.SetItemsProcessed(state.iterations() * cases);
}
BENCHMARK(BM_SpecSuite)->Name("BM_SpecSuite")->Arg(1000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace opspec::spec
