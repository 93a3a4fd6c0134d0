// spec.h: the model of a YAML spec suite (schema v1), as the loader builds
// it and the runner reads it. See docs/spec-format.md for the file format.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/program/program.h"
#include "runtime/core/dtype.h"
#include "runtime/core/memory_format.h"
#include "runtime/core/shape_utils.h"

namespace opspec::spec {

// InputSpec: one input tensor: `x: {shape: [4], init: randn, dtype: f32, device: cpu}`.
struct InputSpec {
  std::string name;
  SizeVec shape;
  std::optional<DType> dtype;    // the case's default dtype when absent
  std::string device;            // "" = the case's device
  // init: randn | rand | zeros | ones | arange | full | values
  std::string init = "randn";
  double fill = 0;               // init: full
  std::vector<double> values;    // init: values (numel must match shape)
  bool requires_grad = false;    // a leaf that requires grad (floating dtypes only)
  // memory_format: the input is made as without it, then laid out so
  // (x.contiguous(memory_format=...)); never kPreserve.
  std::optional<MemoryFormat> memory_format;
  SourceLocation where;
};

// CompileSpec: the `compile:` section.
struct CompileSpec {
  std::string backend = "eager";   // defaults.backend, then "eager"
  std::string backward_backend;    // CompileOptions::backward_backend ("": backend)
  bool fullgraph = false;
  bool trace_once = false;        // CompileOptions::trace_once
  std::optional<bool> dynamic;     // CompileOptions::dynamic: true, false, or unset (automatic)
  std::vector<std::string> disallow_in_graph;   // op names (as written, e.g. "sub" or "aten::sub")
  std::vector<std::pair<std::string, int64_t>> mark_dynamic;  // dynamic: [x.0] -> {"x", 0}
  std::vector<std::pair<std::string, int64_t>> mark_static;   // static: [x.1]
  int cache_size_limit = 8;
  bool error_on_recompile = false;
  // module: compile a module fixture's module itself (compile(module), an
  // OptimizedModule, as torch.compile(model)) instead of a function calling it.
  bool module = false;
  // calls: further calls of the compiled function after the first, each
  // overriding some inputs (e.g. a new shape to provoke a recompile).
  std::vector<std::vector<InputSpec>> calls;
  SourceLocation where;
};

// Tolerance: `equivalent:` — bitwise, or assert_close with optional rtol/atol.
struct EquivalenceSpec {
  bool bitwise = false;
  std::optional<double> rtol;      // both or neither (the loader checks)
  std::optional<double> atol;
  std::string hash = "norm";       // DebugMode hash used for the divergence report
  bool equal_nan = true;           // NaNs in the same places are equal (as torch._dynamo's `same`)
  SourceLocation where;
};

// GradcheckSpec: `gradcheck:` — torch.autograd.gradcheck's finite-difference
// step and tolerances (its defaults).
struct GradcheckSpec {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
};

// OutputsSpec: `outputs:` — the eager outputs' values: `[1, 2]` for a
// program's single output, `[[1, 2], [3]]` one list per output, or
// `{values: .., rtol: .., atol: ..}`; assert_close's per-dtype tolerances
// when rtol and atol are not given (both or neither).
struct OutputsSpec {
  std::vector<std::vector<double>> values;
  bool per_output = false;         // the list of lists form
  std::optional<double> rtol;
  std::optional<double> atol;
};

// StridesSpec: `strides:` — the eager outputs' Tensor.stride() values, exactly:
// `[1, 3]` for a program's single output or `[[1, 3], [4, 1]]` one list per
// output; every compiled call's outputs must have eager's strides too.
struct StridesSpec {
  std::vector<SizeVec> strides;
  bool per_output = false;         // the list of lists form
};

// GraphBreakSpec: one expected break: a substring of its reason.
struct GraphBreakSpec {
  std::string reason;
};

// ExpectSpec: the `expect:` section; every field is optional.
struct ExpectSpec {
  std::optional<std::vector<std::string>> ops;           // exact eager aten sequence
  std::optional<std::vector<std::string>> ops_contain;   // ordered subsequence
  std::optional<std::vector<std::string>> ops_exclude;
  std::optional<std::vector<std::string>> function_ops;  // function-mode level, exact
  std::vector<std::string> ignore_ops;   // removed from the recorded sequences before the checks above
  std::optional<GradcheckSpec> gradcheck;  // finite differences vs backward, in f64
  std::optional<int> graphs;
  std::optional<int> graph_break_count;                  // `graph_breaks: 2`
  std::optional<std::vector<GraphBreakSpec>> graph_breaks;  // `graph_breaks: [{reason: ..}]`
  std::optional<int> recompiles;
  std::optional<int> fused_kernels;
  std::optional<EquivalenceSpec> equivalent;
  std::optional<std::string> check;          // FileCheck directives over the debug string
  SourceLocation check_where;                // where the directives' first line sits (for messages)
  std::optional<std::string> check_graphs;   // FileCheck directives over the printed graphs
  SourceLocation check_graphs_where;
  std::optional<std::string> check_guards;   // FileCheck directives over the guards and recompile reasons
  SourceLocation check_guards_where;
  std::optional<std::string> check_module;   // FileCheck directives over what compile(module) made
  SourceLocation check_module_where;
  std::optional<std::string> export_check;   // `export:` FileCheck over the exported program (ExportedProgram::str)
  SourceLocation export_where;
  std::optional<std::string> debug_string;   // exact golden text
  SourceLocation debug_string_where;         // for --accept: where the golden text sits
  std::optional<std::string> error;          // regex the case's error must match
  std::optional<OutputsSpec> outputs;
  std::optional<StridesSpec> strides;
  SourceLocation where;
};

// BenchSpec: the `bench:` section, for `opspec bench` (See Note [opspec bench]
// in harness/spec/bench.h): one variant per set of input sizes (none: the
// case's own inputs), the backends to time against eager (empty: the
// command's), and the time each measurement runs.
struct BenchSpec {
  std::vector<std::vector<InputSpec>> variants;  // sizes: {x: [[1024], [1048576]]} -> x [1024], then x [1048576]
  std::vector<std::string> backends;
  std::optional<double> min_time;                // seconds
  SourceLocation where;
};

// DebugSpec: the `debug:` section: how the DebugMode behind `check:` and
// `debug_string:` records (defaults: outputs only, no hashes).
struct DebugSpec {
  std::optional<std::string> hash;   // norm | hash_tensor | bitwise: log_tensor_hashes
  bool hash_inputs = false;
  bool record_ids = false;
  bool function_level = false;
  bool record_nn_module = false;   // "[nn.Mod] Bar.abc.l1" module boundaries
  bool record_output = true;
};

// CaseSpec: one case of a suite.
struct CaseSpec {
  std::string name;
  std::string description;
  std::vector<InputSpec> inputs;
  std::optional<Program> program;   // exactly one of program / fixture
  std::string fixture;
  std::optional<CompileSpec> compile;
  ExpectSpec expect;
  DebugSpec debug;
  std::vector<std::string> skip_if;     // no_cuda | cuda | no_gpu ...
  std::optional<std::string> xfail;     // reason
  std::vector<std::string> devices;     // {"cpu"} by default
  std::optional<BenchSpec> bench;       // `bench:`: timed by `opspec bench`, not by `opspec run`
  DType dtype = DType::kFloat32;        // from defaults
  std::string default_backend = "eager";  // defaults.backend: what runs a case compiled without `compile:`
  uint64_t seed = 0;
  // no_grad: `no_grad: true` (or defaults): the case runs with grad mode off,
  // as under torch.no_grad(): an inference run of a module whose parameters
  // require grad (See Note [Parameters require grad]) records no history,
  // and compile serves it with the inference graph, not the AOT pair.
  bool no_grad = false;
  // load_error: a problem found in this case alone (bad program, unknown op):
  // the case fails with it, unless expect.error matches it.
  std::optional<std::string> load_error;
  // spec_error: mistakes in this case's own YAML (an unknown or misspelt key,
  // a wrong type, a bad shape): the case fails with them whatever it expects,
  // and the file's other cases still run. See Note [Two kinds of load errors].
  std::optional<std::string> spec_error;
  SourceLocation where;                 // the case's `- name:` line
};

// SuiteSpec: one YAML file.
struct SuiteSpec {
  std::string name;   // `suite:` or the file's stem
  std::string file;
  int name_line = 0;  // the `suite:` line (0 when the name is the file's stem)
  std::vector<CaseSpec> cases;
};

}  // namespace opspec::spec
