// compile(module): an OptimizedModule runs the module compiled, names its
// parameters under _orig_mod, and hands back the original with orig_mod().
#include "runtime/compile/optimized_module.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/nn/layers.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace optimized_module_test {

using ::testing::ElementsAre;
using ::testing::Pair;

class TwoLayers : public nn::Module {
 public:
  TwoLayers() : nn::Module("TwoLayers") {
    l1 = register_module("l1", std::make_shared<nn::Linear>(3, 4));
    l2 = register_module("l2", std::make_shared<nn::Linear>(4, 2));
  }
  Tensor forward(const Tensor& x) override { return (*l2)(ops::relu((*l1)(x))); }
  std::shared_ptr<nn::Linear> l1, l2;
};

TEST(OptimizedModule, RunsTheModuleCompiledAndKeepsTheOriginal) {
  auto model = std::make_shared<TwoLayers>();
  std::shared_ptr<OptimizedModule> opt = compile(model, {.backend = "fused"});
  EXPECT_EQ(opt->orig_mod(), model);
  const Tensor x = ops::randn({5, 3});
  EXPECT_EQ((*opt)(x).to_vector<float>(), (*model)(x).to_vector<float>());
  (*opt)(ops::randn({5, 3}));
  const CompileStats stats = opt->compiled().stats();
  EXPECT_EQ(stats.calls, 2);
  EXPECT_EQ(stats.compiles, 1);
  EXPECT_THAT(stats.ops_per_graph, ElementsAre(ElementsAre("aten::linear", "aten::relu", "aten::linear")));
  // The guards name forward's input as PyTorch does.
  EXPECT_THAT(stats.guards[0], ::testing::StartsWith("tensor 'input': f32[5, 3]"));
  std::vector<std::string> names;
  for (const auto& [name, p] : opt->named_parameters()) names.push_back(name);
  EXPECT_THAT(names, ElementsAre("_orig_mod.l1.weight", "_orig_mod.l1.bias", "_orig_mod.l2.weight",
                                 "_orig_mod.l2.bias"));
}

TEST(OptimizedModule, ANullModuleIsAnError) {
  EXPECT_THROW(compile(std::shared_ptr<TwoLayers>(), {}), Error);
}

}  // namespace optimized_module_test
}  // namespace opspec
