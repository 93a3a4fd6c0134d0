// The Llama reference model (fixtures/llama_block.cc) run eagerly and
// compiled, each under DebugMode with tensor hashes: the logs diffed op by op
// (PyTorch's DebugMode.check_hash_mismatches) show no divergence, since the
// eager and aot_eager backends run the same aten ops on the same values (a
// wrong decomposition caught this way: harness/trace_equivalence_test.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "harness/debug_diff.h"
#include "harness/debug_mode.h"
#include "harness/program/fixture.h"
#include "runtime/compile/compile.h"
#include "runtime/core/generator.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace reference_models_log_diff_test {

using ::testing::HasSubstr;

template <class F>
std::vector<DebugCall> hashed_log(F&& run, bool record_modules) {
  DebugMode dm(DebugModeOptions{.record_nn_module = record_modules});
  {
    auto scope = dm.enter();
    auto hashes = DebugMode::log_tensor_hashes(HashKind::kHashTensor, /*hash_inputs=*/true);
    run();
  }
  return {dm.logs().begin(), dm.logs().end()};
}

TEST(ReferenceModelLogDiff, LlamaEagerAndCompiledLogsShowNoDivergence) {
  const Fixture* f = find_fixture("llama_block");
  ASSERT_NE(f, nullptr);
  manual_seed(0);
  const std::shared_ptr<nn::Module> model = f->make_module();
  const Tensor x = ops::randn({2, 8, 64});
  const TracedFunction fn = [model](const std::vector<Tensor>& in) { return std::vector<Tensor>{(*model)(in[0])}; };
  const std::vector<DebugCall> eager = hashed_log([&] { fn({x}); }, /*record_modules=*/true);
  // The eager log shows the module tree around its ops.
  const std::string text = absl::StrJoin(rendered_entries(eager), "\n");
  EXPECT_THAT(text, HasSubstr("[nn.Mod] LlamaDecoderLayer.self_attn.q_proj"));
  EXPECT_THAT(text, HasSubstr("[nn.Mod] LlamaDecoderLayer.mlp.act_fn"));
  const std::vector<DebugCall> plain = hashed_log([&] { fn({x}); }, false);
  for (const char* backend : {"eager", "aot_eager"}) {
    SCOPED_TRACE(backend);
    CompiledFunction compiled(fn, {.backend = backend});
    const LogDiff diff = diff_logs(plain, hashed_log([&] { compiled({x}); }, false));
    EXPECT_TRUE(diff.equivalent()) << diff.report();
    EXPECT_EQ(diff.entries2, diff.entries1);
    EXPECT_EQ(diff.entries1, 75u);  // the block's aten ops, as specs/fixtures/llama.yaml lists them
  }
}

}  // namespace reference_models_log_diff_test
}  // namespace opspec
