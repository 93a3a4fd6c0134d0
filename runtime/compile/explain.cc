#include "runtime/compile/explain.h"

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace opspec {

std::string ExplainOutput::str() const {
  std::string s = str_cat("Graph Count: ", graph_count, "\nGraph Break Count: ", graph_break_count,
                          "\nOp Count: ", op_count, "\nBreak Reasons:\n");
  for (size_t i = 0; i < break_reasons.size(); ++i) {
    str_append(&s, "  Break Reason ", i + 1, ":\n    Reason: ", break_reasons[i].reason, "\n    User Stack:\n      ",
               break_reasons[i].user_site.empty() ? "<unknown>" : break_reasons[i].user_site, "\n");
  }
  s += "Ops per Graph:\n";
  for (size_t i = 0; i < ops_per_graph.size(); ++i) {
    str_append(&s, "  Ops ", i + 1, ":\n");
    for (const std::string& op : ops_per_graph[i]) str_append(&s, "    ", op, "\n");
  }
  s += "Out Guards:\n";
  for (size_t i = 0; i < out_guards.size(); ++i) {
    const OutGuard& g = out_guards[i];
    std::vector<std::string> quoted;
    for (const std::string& c : g.code_list) quoted.push_back(str_cat("\"", c, "\""));
    str_append(&s, "  Guard ", i + 1, ":\n    Name: '", g.name, "'\n    Source: ", g.source, "\n    Create Function: ",
               g.create_function, "\n    Code List: [", absl::StrJoin(quoted, ", "), "]\n");
  }
  if (!aot_graphs.empty()) {
    s += "AOT Graphs (forward and backward, for inputs that require grad):\n";
    for (size_t i = 0; i < aot_graphs.size(); ++i) {
      std::string indented = str_cat("    ", aot_graphs[i]);
      for (size_t at = indented.find('\n'); at != std::string::npos; at = indented.find('\n', at + 5)) {
        indented.insert(at + 1, "    ");
      }
      str_append(&s, "  AOT ", i + 1, ":\n", indented, "\n");
    }
  }
  return s;
}

ExplainOutput explain_output(const CompileStats& stats) {
  ExplainOutput out;
  out.graph_count = stats.graphs_run;
  out.graph_break_count = static_cast<int>(stats.breaks.size());
  out.break_reasons = stats.breaks;
  out.ops_per_graph = stats.ops_per_graph;
  out.aot_graphs = stats.aot_graphs;
  for (const auto& ops : stats.ops_per_graph) out.op_count += static_cast<int>(ops.size());
  out.guards = stats.guards;
  for (const std::string& code : stats.guard_code) {
    ExplainOutput::OutGuard shape_env{"", "shape_env", "SHAPE_ENV", {}};
    for (absl::string_view line : absl::StrSplit(code, '\n', absl::SkipEmpty())) {
      if (absl::ConsumePrefix(&line, "TENSOR_MATCH: ")) {
        // "check_tensor(L['x'], ...": the name is the first argument.
        const size_t open = line.find('('), comma = line.find(", ");
        const std::string name(line.substr(open + 1, comma - open - 1));
        out.out_guards.push_back({name, name.starts_with("L[") ? "local" : "graph", "TENSOR_MATCH", {std::string(line)}});
      } else if (absl::ConsumePrefix(&line, "LAMBDA_GUARD: ")) {
        shape_env.code_list.emplace_back(line);
      }
    }
    if (!shape_env.code_list.empty()) out.out_guards.push_back(std::move(shape_env));
  }
  return out;
}

ExplainOutput Explainer::operator()(const std::vector<Tensor>& inputs) const {
  CompiledFunction compiled(fn_, options_);
  std::vector<Tensor> outputs = compiled(inputs);
  ExplainOutput out = explain_output(compiled.stats());
  out.outputs = std::move(outputs);
  return out;
}

CompileCounter::CompileCounter(Backend inner) : inner_(std::move(inner)), state_(std::make_shared<State>()) {}

Backend CompileCounter::backend() {
  return [inner = inner_, state = state_](const Graph& graph, const std::vector<Tensor>& examples) {
    {
      std::lock_guard<std::mutex> lock(state->mu);
      ++state->frames;
      for (Node* n : graph.nodes()) state->ops += n->op() == NodeOp::kCall;
      state->graphs.push_back(graph.str());
    }
    return inner(graph, examples);
  };
}

int CompileCounter::frame_count() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->frames;
}

int CompileCounter::op_count() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->ops;
}

std::vector<std::string> CompileCounter::graphs() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->graphs;
}

void CompileCounter::clear() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->frames = 0;
  state_->ops = 0;
  state_->graphs.clear();
}

}  // namespace opspec
