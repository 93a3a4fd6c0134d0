// break_policy.cc: the texts of graph breaks and what a break does.
#include "runtime/compile/internal/break_policy.h"

#include "runtime/compile/internal/capture.h"
#include "runtime/compile/logging.h"

namespace opspec::internal {

BreakText break_text(BreakKind kind, std::string_view subject) {
  switch (kind) {
    case BreakKind::kUser:
      return {"Call to `opspec::graph_break()`", "User-inserted graph break.",
              "Remove the `opspec::graph_break()` call."};
    case BreakKind::kDisallowedOp:
      return {str_cat("Call to op `", subject, "`, which is marked disallow_in_graph"),
              "Ops marked with disallow_in_graph run eagerly between two graphs.",
              str_cat("Call allow_op_in_graph(\"", subject, "\") to capture it.")};
    case BreakKind::kDataDependent:
      return {str_cat("Data-dependent read: ", subject),
              "The value of a captured tensor is needed to go on, so the graph so far must run first.",
              "Avoid reading tensor values (item(), to_vector, data_ptr) inside the compiled function, or move the "
              "read out of it."};
    case BreakKind::kDisabledFunction:
      return {str_cat("Call to function `", subject, "`, which is wrapped with disable()"),
              "Functions wrapped with disable() run eagerly and are never captured.",
              "Remove the disable() wrapper to capture its ops."};
    case BreakKind::kBackward:
      return {"Unsupported Tensor.backward() call",
              "Dynamo does not trace Tensor.backward(): the graph so far ends and runs, then backward runs eagerly "
              "(through each compiled graph's CompiledFunctionBackward).",
              "Call backward outside the compiled function to keep the graph whole."};
    case BreakKind::kDynamicOutputShape:
      // Dynamo's "Dynamic shape operator" break (capture_dynamic_output_shape_ops is off).
      return {str_cat("Dynamic shape operator: ", subject),
              str_cat("Operator `", subject, "`'s output shape depends on input Tensor data."),
              "Enable tracing of dynamic shape operators with "
              "`torch._dynamo.config.capture_dynamic_output_shape_ops = True`; opspec does not capture them."};
    case BreakKind::kNoMetaKernel:
      return {str_cat("Op `", subject, "` has no meta kernel"),
              "Without a meta kernel the op's output metadata cannot be known without running it.",
              str_cat("Register a Meta kernel for ", subject, " with Library::impl(..., DispatchKey::kMeta, ...).")};
  }
  return {};
}

void refuse_under_fullgraph(const CompiledState& state, BreakKind kind, std::string_view subject,
                            const std::string& user_site) {
  if (!state.options.fullgraph) return;
  const BreakText text = break_text(kind, subject);
  std::string message = str_cat("compile(", state.options.name, ", fullgraph=true): graph break: ", text.title,
                                "\n  Explanation: ", text.explanation, "\n  Hint: ", text.hint,
                                " Or compile with fullgraph = false to let the graph split here.");
  if (!user_site.empty()) str_append(&message, "\n  User site: ", user_site);
  throw GraphBreakError(message);
}

// Note [Breaks are counted when traced]
// Dynamo finds a break while it traces a frame, and counts and logs it then
// (counters["graph_break"], TORCH_LOGS=graph_breaks); a call that runs only
// cached code traces nothing and finds none. opspec runs fn on every call, so
// it meets each break every call: it counts one when the graph the break
// ends was compiled on this call (a first call, or a recompile: Dynamo traced
// the frame again), or when the break is new at its position (a break that
// ends an empty graph, as Dynamo's trace of a frame that breaks at once). A
// call served by the cache, or by eager fallback past cache_size_limit, adds
// none. (It used to count every call's: two calls of one break read 2.)
void note_break(CompiledState& state, BreakKind kind, std::string_view subject, const std::string& user_site,
                size_t position, bool traced) {
  const BreakText text = break_text(kind, subject);
  if (!state.note_break({text.title, user_site}, position, traced)) return;
  log_message("graph_breaks", str_cat("Graph break in ", state.options.name, ": ", text.title,
                                      user_site.empty() ? "" : str_cat(" (", user_site, ")")));
}

std::string op_break_subject(BreakKind kind, const OperatorHandle& op) {
  if (kind == BreakKind::kDataDependent) return str_cat(op.name(), " (Tensor.item())");
  return op.name();
}

}  // namespace opspec::internal
