// compile_assertions.cc: the bodies of EXPECT_GRAPH_BREAKS and friends.
#include "harness/gtest/compile_assertions.h"

#include <exception>
#include <optional>
#include <sstream>

#include "harness/debug_diff.h"
#include "harness/gtest/report_pages.h"

namespace opspec::internal {
namespace {

std::string backend_name(const CompileOptions& options) {
  return options.backend_fn ? std::string("<custom backend_fn>") : options.backend;
}

// header: "graph breaks of `f` (backend 'eager')".
std::string header(std::string_view what, const char* text, const CompileOptions& options) {
  const std::vector<std::string> args = split_macro_args(text);
  return str_cat(what, " of `", abbreviate(args.empty() ? "" : args[0]), "` (backend '", backend_name(options), "')");
}

::testing::AssertionResult fail(const std::string& head, std::string message) {
  while (!message.empty() && message.back() == '\n') message.pop_back();
  return ::testing::AssertionFailure() << head << ":\n" << message;
}

// observe: observe_compile, with an exception turned into a failure message.
std::optional<CompileObservation> observe(const TracedFunction& fn, const std::vector<std::vector<Tensor>>& calls,
                                          const CompileOptions& options, std::string* error) {
  try {
    return observe_compile(fn, calls, options);
  } catch (const std::exception& e) {
    *error = str_cat("fn threw: ", e.what());
  } catch (...) {
    *error = "fn threw an exception that is not a std::exception";
  }
  return std::nullopt;
}

std::string list_breaks(const CompileStats& stats) {
  std::string out;
  for (size_t i = 0; i < stats.breaks.size(); ++i) {
    const GraphBreak& b = stats.breaks[i];
    str_append(&out, "  break ", i + 1, ": ", b.reason, b.user_site.empty() ? "" : " at ", b.user_site, "\n");
  }
  return out;
}

}  // namespace

CompileOptions fused_defaults() {
  CompileOptions options;
  options.backend = "fused";
  return options;
}

::testing::AssertionResult eager_compiled_equivalent_impl(const char* text, const TracedFunction& fn,
                                                          const std::vector<Tensor>& inputs,
                                                          const EquivalenceOptions& options) {
  const std::vector<std::string> args = split_macro_args(text);
  // The check's own message names the backend.
  const std::string head = str_cat("eager vs compiled `", abbreviate(args.empty() ? "" : args[0]), "` on `",
                                   abbreviate(args.size() > 1 ? args[1] : ""), "`");
  try {
    EquivalenceResult r = check_eager_compiled_equivalent(fn, inputs, options);
    if (r.result.ok) return ::testing::AssertionSuccess();
    FailureLogs logs{.equivalence_eager = rendered_entries(r.eager_log),
                     .equivalence_compiled = rendered_entries(r.compiled_log)};
    const std::optional<size_t> at = diff_logs(r.eager_log, r.compiled_log).divergence_index();
    logs.equivalence_divergence = at ? static_cast<int>(*at) : -1;
    return report_failure(fail(head, r.result.message), "EXPECT_EAGER_COMPILED_EQUIVALENT", logs);
  } catch (const std::exception& e) {
    return report_failure(fail(head, str_cat("threw: ", e.what())), "EXPECT_EAGER_COMPILED_EQUIVALENT");
  }
}

::testing::AssertionResult graph_breaks_impl(const char* text, const TracedFunction& fn,
                                             const std::vector<Tensor>& inputs, int expected,
                                             const std::vector<ReasonMatcher>& reasons, const CompileOptions& options) {
  const std::string head = header("graph breaks", text, options);
  if (reasons.size() > static_cast<size_t>(std::max(expected, 0))) {
    return fail(head, str_cat(reasons.size(), " reason matchers given for ", expected, " expected graph breaks"));
  }
  std::string error;
  std::optional<CompileObservation> obs = observe(fn, {inputs}, options, &error);
  if (!obs) return report_failure(fail(head, error), "EXPECT_GRAPH_BREAKS");
  FailureLogs logs{.compiled_log = obs->debug_string, .graphs = obs->graphs, .graph_dots = obs->graph_dots};
  for (const GraphBreak& b : obs->stats.breaks) {
    logs.graph_breaks.push_back(b.user_site.empty() ? b.reason : str_cat(b.reason, " (at ", b.user_site, ")"));
  }
  CheckResult count = check_graph_breaks(obs->stats, expected);
  if (!count.ok) return report_failure(fail(head, count.message), "EXPECT_GRAPH_BREAKS", logs);
  for (size_t i = 0; i < reasons.size(); ++i) {
    const std::string& reason = obs->stats.breaks[i].reason;
    ::testing::StringMatchResultListener why;
    if (reasons[i].MatchAndExplain(reason, &why)) continue;
    std::ostringstream desc;
    reasons[i].DescribeTo(&desc);
    std::string msg =
        str_cat("break ", i + 1, "'s reason doesn't match\n  expected: ", desc.str(), "\n    actual: \"", reason, "\"");
    if (!why.str().empty()) str_append(&msg, ", ", why.str());
    str_append(&msg, "\nall breaks:\n", list_breaks(obs->stats));
    msg.pop_back();
    return report_failure(fail(head, msg), "EXPECT_GRAPH_BREAKS", logs);
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult graphs_impl(const char* text, const TracedFunction& fn, const std::vector<Tensor>& inputs,
                                       int expected, const CompileOptions& options) {
  const std::string head = header("graphs", text, options);
  std::string error;
  std::optional<CompileObservation> obs = observe(fn, {inputs}, options, &error);
  if (!obs) return fail(head, error);
  CheckResult r = check_graphs(*obs, expected);
  return r.ok ? ::testing::AssertionSuccess() : fail(head, r.message);
}

::testing::AssertionResult recompiles_impl(const char* text, const TracedFunction& fn,
                                           const std::vector<std::vector<Tensor>>& calls, int expected,
                                           const CompileOptions& options) {
  const std::string head = header("recompiles", text, options);
  std::string error;
  std::optional<CompileObservation> obs = observe(fn, calls, options, &error);
  if (!obs) return fail(head, error);
  CheckResult r = check_recompiles(obs->stats, expected);
  return r.ok ? ::testing::AssertionSuccess() : fail(head, r.message);
}

::testing::AssertionResult fused_kernels_impl(const char* text, const TracedFunction& fn,
                                              const std::vector<Tensor>& inputs, int expected,
                                              const CompileOptions& options) {
  const std::string head = header("fused kernels", text, options);
  std::string error;
  std::optional<CompileObservation> obs = observe(fn, {inputs}, options, &error);
  if (!obs) return fail(head, error);
  CheckResult r = check_fused_kernels(*obs, expected);
  return r.ok ? ::testing::AssertionSuccess() : fail(head, r.message);
}

}  // namespace opspec::internal
