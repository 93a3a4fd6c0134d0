// Eager vs traced runs compared with hashed DebugMode logs: a faithful trace
// is equivalent, the reference's wrong decomposition (cos -> sin) is caught
// at the op where it happens.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/debug_diff.h"
#include "harness/debug_mode.h"
#include "runtime/compile/aot_eager.h"
#include "runtime/compile/compile.h"
#include "runtime/graph/interpreter.h"
#include "runtime/ops/ops.h"
#include "runtime/trace/make_fx.h"

namespace opspec {
namespace trace_equivalence_test {

using ::testing::HasSubstr;
using ::testing::StartsWith;

template <class F>
std::vector<DebugCall> hashed_log(F&& run) {
  DebugMode dm;
  {
    auto scope = dm.enter();
    auto hashes = DebugMode::log_tensor_hashes();
    run();
  }
  return {dm.logs().begin(), dm.logs().end()};
}

Tensor program(const Tensor& x) { return ops::add(ops::cos(ops::relu(x)), 1.0); }

TEST(TraceEquivalence, WrongDecompositionIsCaughtWhereItHappens) {
  const Tensor x = ops::arange(-1.0, 1.0, 0.125);
  const std::vector<DebugCall> eager = hashed_log([&] { program(x); });

  const Graph faithful = make_fx(&program)(x);
  const LogDiff same = diff_logs(eager, hashed_log([&] { run_graph(faithful, {x}); }));
  EXPECT_TRUE(same.equivalent()) << same.report();

  DecompositionTable wrong;
  wrong.add("aten::cos", [](const Tensor& t) { return ops::sin(t); });
  const Graph bad = make_fx(&program, {.decomposition_table = &wrong})(x);
  const LogDiff diff = diff_logs(eager, hashed_log([&] { run_graph(bad, {x}); }));
  EXPECT_FALSE(diff.equivalent());
  EXPECT_FALSE(diff.structurally_aligned);
  EXPECT_EQ(diff.first_structural_index, 1u);  // relu agrees; cos vs sin is entry 1
  EXPECT_THAT(diff.report(), StartsWith("first divergence at entry 1: aten::cos (depth 1) vs aten::sin (depth 1)"));
}

TEST(TraceEquivalence, AWrongDecompositionKeepingTheOpNameIsCaughtByHashes) {
  // An override that keeps the op but computes something else: the logs align
  // and only the output hash of that op differs.
  ScopedOverride cos_is_sin("aten::cos", DispatchKey::kCPU, [](const Tensor& t) {
    DisablePythonDispatcherGuard builtin;
    return ops::sin(t);
  });
  const Tensor x = ops::arange(-1.0, 1.0, 0.125);
  const std::vector<DebugCall> eager = hashed_log([&] { program(x); });
  const Graph g = make_fx(&program)(x);
  const std::vector<DebugCall> overridden = hashed_log([&] {
    EnablePythonDispatcherGuard on;
    run_graph(g, {x});
  });
  const LogDiff diff = diff_logs(eager, overridden);
  ASSERT_TRUE(diff.structurally_aligned) << diff.report();
  ASSERT_NE(diff.first_mismatch(), nullptr);
  EXPECT_EQ(diff.first_mismatch()->call, "aten::cos");
  EXPECT_THAT(diff.report(), HasSubstr("aten::cos output hash differs"));
}

TEST(TraceEquivalence, CompiledRunsMatchEagerAndAotEagerShowsAWrongDecomposition) {
  const Tensor x = ops::arange(-1.0, 1.0, 0.125);
  const std::vector<DebugCall> eager = hashed_log([&] { program(x); });
  // eager and aot_eager run the same aten ops as eager code, with the same hashes.
  for (const char* backend : {"eager", "aot_eager"}) {
    auto compiled = compile(&program, {.backend = backend});
    const LogDiff diff = diff_logs(eager, hashed_log([&] { compiled(x); }));
    EXPECT_TRUE(diff.equivalent()) << backend << ": " << diff.report();
  }
  DecompositionTable wrong;
  wrong.add("aten::cos", [](const Tensor& t) { return ops::sin(t); });
  auto bad = compile(&program, {.backend_fn = make_aot_eager_backend(&wrong)});
  const LogDiff diff = diff_logs(eager, hashed_log([&] { bad(x); }));
  EXPECT_THAT(diff.report(), StartsWith("first divergence at entry 1: aten::cos (depth 1) vs aten::sin (depth 1)"));
}

}  // namespace
}  // namespace opspec
