// formulas_index_test.cc: the indexing formulas' choices that op logs show.
#include <gtest/gtest.h>

#include "runtime/autograd/autograd_test_util.h"

namespace opspec {
namespace {

using autograd_test::backward_ops;
using autograd_test::leaf;

// PyTorch 2.x's gather_backward and index_backward take their out-of-place
// op when a tensor is subclass-like, which every tensor is while a dispatch
// mode is on (the recorder here), so a mode sees scatter_add and index_put.
TEST(AutogradIndexFormulas, GatherBackwardUnderAModeScattersOutOfPlace) {
  const Tensor x = leaf({2, 3}, 1);
  const Tensor i = ops::tensor(std::vector<double>{0, 2, 1, 1}, {2, 2}, DType::kInt64);
  EXPECT_EQ(backward_ops(ops::sum(ops::gather(x, 1, i))),
            (std::vector<std::string>{"aten::ones_like", "aten::expand", "aten::new_zeros", "aten::scatter_add"}));
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{1, 0, 1, 0, 2, 0}));
}

TEST(AutogradIndexFormulas, IndexBackwardUnderAModePutsOutOfPlace) {
  const Tensor x = leaf({3}, 2);
  const Tensor i = ops::tensor(std::vector<double>{2, 0, 2}, {3}, DType::kInt64);
  EXPECT_EQ(backward_ops(ops::sum(ops::index(x, {i}))),
            (std::vector<std::string>{"aten::ones_like", "aten::expand", "aten::new_zeros", "aten::index_put"}));
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{1, 0, 2}));
}

// Without a mode they write into the zeros in place; the gradients are the same.
TEST(AutogradIndexFormulas, GatherAndIndexBackwardWithoutAModeAccumulateRepeatedIndices) {
  const Tensor x = leaf({2, 3}, 3);
  const Tensor i = ops::tensor(std::vector<double>{0, 2, 1, 1}, {2, 2}, DType::kInt64);
  ops::sum(ops::gather(x, 1, i)).backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{1, 0, 1, 0, 2, 0}));

  const Tensor y = leaf({3}, 4);
  const Tensor j = ops::tensor(std::vector<double>{2, 0, 2}, {3}, DType::kInt64);
  ops::sum(ops::index(y, {j})).backward();
  EXPECT_EQ(y.grad().to_vector<double>(), (std::vector<double>{1, 0, 2}));
}

}  // namespace
}  // namespace opspec
