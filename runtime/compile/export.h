// export.h: export_program(fn, options)(inputs), opspec's torch.export /
// torch._dynamo.export: fn as one graph with its guards, input and output
// specs and range constraints, runnable later and saved as versioned JSON.
// See Note [Export].
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/compile/compile.h"

namespace opspec {

// Note [Export]
// Exporting checks first that fn compiles to one graph (any graph break is a
// GraphBreakError naming it, as fullgraph), then traces fn once on fake
// tensors at PreDispatch (torch-level ops: linear stays whole), so the
// graph's placeholders are fn's inputs and its output node fn's results,
// in order. Dims named in ExportOptions::dynamic_shapes are symbols with
// range [2, inf), duck-shaped as compile()'s (See Note [Guards]). A declared
// dim must really be free: the graph is traced again with each symbol's size
// changed, and if that trace fails or differs (the program baked the size
// into an op argument, or combined it with a fixed size) the export fails
// with PyTorch's "Constraints violated" error naming the dim; a declared dim
// of size 0 or 1 fails the same way (it would be specialized). The same
// re-traces give the graph's symbolic sizes (f32[s0, 3], f32[4*s0]) for
// str(). run() checks the guards first and names the one an input fails.
// save() writes the format of docs/export-format.md (version 1): the graph,
// the schema of every op it calls (load() refuses a graph whose ops are
// missing or whose schemas changed), the inputs' guards, constants by value.

// ExportOptions: how export_program traces.
struct ExportOptions {
  // input_names: fn's inputs' names ("x0", "x1", ... when absent).
  std::vector<std::string> input_names;
  // dynamic_shapes: the dims that are dynamic, by input name: {{"x", {0}}}
  // (torch.export's dynamic_shapes={"x": {0: Dim("batch")}}).
  std::vector<std::pair<std::string, std::vector<int64_t>>> dynamic_shapes;
  // name: the program's name in messages and str().
  std::string name = "fn";
};

// TensorSpec: one input or output of an exported program.
struct TensorSpec {
  std::string name;  // the placeholder's name, or the output node's
  std::string kind;  // "user_input", "user_output"
  std::string meta;  // "f32[s0, 3]"
};

// ExportedProgram: one graph, its guards and specs. Copyable (shares the graph).
class ExportedProgram {
 public:
  ExportedProgram() = default;

  // graph: the exported graph (torch-level ops, fn's inputs and results).
  const Graph& graph() const { return *graph_; }
  // guards: what run()'s inputs must satisfy (input specs, range constraints).
  const GuardSet& guards() const { return guards_; }
  // input_specs / output_specs: in order, with symbolic sizes.
  const std::vector<TensorSpec>& input_specs() const { return inputs_; }
  const std::vector<TensorSpec>& output_specs() const { return outputs_; }
  // range_constraints: "s0: VR[2, int_oo]" per symbol, as PyTorch prints them.
  std::vector<std::string> range_constraints() const;
  const std::string& name() const { return name_; }

  // run: the graph on inputs, after checking the guards; an input that fails
  // one throws opspec::Error naming the program and the guard.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;
  template <class... Ts>
    requires(std::is_convertible_v<const Ts&, const Tensor&> && ...)
  std::vector<Tensor> run(const Ts&... inputs) const {
    return run(std::vector<Tensor>{inputs...});
  }

  // str: the graph with symbolic sizes, the signature, the range constraints
  // and the guards (what `expect.export:` FileChecks).
  std::string str() const;

  // to_json / from_json: the saved form (docs/export-format.md). from_json
  // throws opspec::Error naming what is wrong (bad JSON, another version, an
  // unknown op, a changed schema).
  std::string to_json() const;
  static ExportedProgram from_json(std::string_view text);
  // save / load: to_json into a file and back; errors name the path.
  void save(const std::string& path) const;
  static ExportedProgram load(const std::string& path);

 private:
  friend ExportedProgram export_traced(const TracedFunction& fn, const std::vector<Tensor>& inputs,
                                       const ExportOptions& options);
  std::string name_;
  std::shared_ptr<const Graph> graph_;
  GuardSet guards_;
  std::vector<TensorSpec> inputs_, outputs_;
  std::vector<std::string> node_sizes_;  // per node line of graph_->str(): its symbolic meta, or ""
};

// export_traced: export_program's work, for a TracedFunction.
ExportedProgram export_traced(const TracedFunction& fn, const std::vector<Tensor>& inputs,
                              const ExportOptions& options);

// Exporter: what export_program returns; call it with example inputs.
class Exporter {
 public:
  Exporter(TracedFunction fn, ExportOptions options) : fn_(std::move(fn)), options_(std::move(options)) {}
  ExportedProgram operator()(const std::vector<Tensor>& inputs) const { return export_traced(fn_, inputs, options_); }
  template <class... Ts>
    requires(std::is_convertible_v<const Ts&, const Tensor&> && ...)
  ExportedProgram operator()(const Ts&... inputs) const {
    return (*this)(std::vector<Tensor>{inputs...});
  }

 private:
  TracedFunction fn_;
  ExportOptions options_;
};

// export_program: `auto ep = export_program(f, {.input_names = {"x"},
// .dynamic_shapes = {{"x", {0}}}})(x);` (export is a C++ keyword). See Note [Export].
template <class Fn>
Exporter export_program(Fn fn, ExportOptions options = {}) {
  return Exporter(internal::as_traced_function(std::move(fn)), std::move(options));
}

}  // namespace opspec
