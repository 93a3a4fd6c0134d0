// Ops that write a tensor refuse inputs sharing its memory where PyTorch does
// (See Note [Memory overlap] in elementwise_rules.h), on the CPU and Meta alike.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <tuple>

#include "runtime/compile/backend.h"
#include "runtime/ops/elementwise_rules.h"
#include "runtime/ops/op_table.h"
#include "runtime/ops/ops.h"
#include "runtime/trace/make_fx.h"

namespace opspec {
namespace memory_overlap_test {

using internal::MemOverlap;
using internal::overlap_status;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr const char* kOverlap =
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
    "location. Please clone() the tensor before performing the operation.";

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

TEST(MemoryOverlapTest, StatusIsPyTorchsGetOverlapStatus) {
  const Tensor x = ops::arange(12, {.dtype = DType::kFloat32});
  const Tensor m = ops::view(x, {3, 4});
  EXPECT_EQ(overlap_status(x, x), MemOverlap::kFull);
  EXPECT_EQ(overlap_status(m, ops::view(x, {3, 4})), MemOverlap::kFull);  // same span and strides
  EXPECT_EQ(overlap_status(x, m), MemOverlap::kPartial);                  // same span, other strides
  EXPECT_EQ(overlap_status(ops::slice(x, 0, 1, 5), ops::slice(x, 0, 0, 4)), MemOverlap::kPartial);
  EXPECT_EQ(overlap_status(ops::slice(x, 0, 0, 4), ops::slice(x, 0, 4, 8)), MemOverlap::kNo);
  EXPECT_EQ(overlap_status(m, ops::t(m)), MemOverlap::kPartial);  // a transpose is still dense
  // A column is not dense: PyTorch does not look (TooHard), nor do we.
  EXPECT_EQ(overlap_status(ops::select(m, 1, 1), ops::select(m, 0, 0)), MemOverlap::kTooHard);
  EXPECT_EQ(overlap_status(x, ops::ones({12})), MemOverlap::kNo);
  EXPECT_EQ(overlap_status(x, ops::slice(x, 0, 0, 0)), MemOverlap::kNo);  // empty
}

// TensorIterator's in-place ops: partial overlap raises, full overlap runs.
TEST(MemoryOverlapTest, InPlaceElementwiseOpsRefusePartialOverlap) {
  Tensor x = ops::tensor({0, 1, 2, 3}, {2, 2});
  EXPECT_THAT([&] { ops::add_(x, ops::t(x)); },
              ThrowsMessage<Error>(AllOf(HasSubstr("aten::add_"), HasSubstr(kOverlap))));
  EXPECT_THAT([&] { ops::mul_(x, ops::t(x)); }, ThrowsMessage<Error>(HasSubstr(kOverlap)));
  EXPECT_THAT([&] { ops::sub_(x, ops::t(x), 2); }, ThrowsMessage<Error>(HasSubstr(kOverlap)));
  EXPECT_THAT([&] { ops::div_(x, ops::t(x)); }, ThrowsMessage<Error>(HasSubstr(kOverlap)));
  Tensor v = ops::tensor({1, 2, 3}, {3});
  EXPECT_THAT([&] { ops::mul_(v, ops::select(v, 0, 2)); }, ThrowsMessage<Error>(HasSubstr(kOverlap)));  // v *= v[2]
  Tensor head = ops::slice(v, 0, 1, 3);
  EXPECT_THAT([&] { ops::add_(head, ops::slice(v, 0, 0, 2)); }, ThrowsMessage<Error>(HasSubstr(kOverlap)));
  Tensor bits = ops::tensor({1, 0, 1}, {3}, DType::kBool);
  Tensor tail = ops::slice(bits, 0, 1, 3);
  EXPECT_THAT([&] { ops::logical_and_(tail, ops::slice(bits, 0, 0, 2)); }, ThrowsMessage<Error>(HasSubstr(kOverlap)));
  EXPECT_THAT(values(x), ElementsAre(0, 1, 2, 3));  // nothing was written
  EXPECT_THAT(values(v), ElementsAre(1, 2, 3));
  ops::add_(x, x);  // full overlap: each element is read before it is written
  EXPECT_THAT(values(x), ElementsAre(0, 2, 4, 6));
  ops::mul_(x, ops::view(x, {2, 2}));
  EXPECT_THAT(values(x), ElementsAre(0, 4, 16, 36));
}

// A row and a column of one matrix share an element, but the column is not
// dense: PyTorch runs (TooHard); ours reads the input whole first.
TEST(MemoryOverlapTest, OverlapPyTorchCannotJudgeStillRuns) {
  Tensor m = ops::tensor({0, 1, 2, 3, 4, 5, 6, 7, 8}, {3, 3});
  Tensor col = ops::select(m, 1, 1);
  ops::add_(col, ops::select(m, 0, 1));  // col[i] += m[1][i]; col[1] is m[1][1]
  EXPECT_THAT(values(m), ElementsAre(0, 4, 2, 3, 8, 5, 6, 12, 8));
}

TEST(MemoryOverlapTest, CopyRefusesPartialOverlapButNotItsOwnData) {
  Tensor x = ops::tensor({0, 1, 2, 3}, {4});
  Tensor dst = ops::slice(x, 0, 1, 4);
  EXPECT_THAT([&] { ops::copy_(dst, ops::slice(x, 0, 0, 3)); },
              ThrowsMessage<Error>(AllOf(HasSubstr("aten::copy_"), HasSubstr(kOverlap))));
  Tensor m = ops::view(x, {2, 2});
  EXPECT_THAT([&] { ops::copy_(m, ops::t(m)); }, ThrowsMessage<Error>(HasSubstr(kOverlap)));
  ops::copy_(x, x);
  ops::copy_(m, ops::view(x, {2, 2}));  // the same data: copy_ returns at once
  EXPECT_THAT(values(x), ElementsAre(0, 1, 2, 3));
  // An expanded self copied from itself returns before the internal overlap check.
  Tensor e = ops::expand(ops::tensor({5}, {1}), {3});
  ops::copy_(e, e);
  EXPECT_THAT([&] { ops::copy_(e, ops::ones({3})); }, ThrowsMessage<Error>(HasSubstr("more than one element")));
}

TEST(MemoryOverlapTest, MaskedFillRefusesAMaskOverlappingSelf) {
  Tensor b = ops::tensor({1, 0, 1, 1}, {4}, DType::kBool);
  Tensor tail = ops::slice(b, 0, 1, 4);
  EXPECT_THAT([&] { ops::masked_fill_(tail, ops::slice(b, 0, 0, 3), Scalar(false)); },
              ThrowsMessage<Error>(AllOf(HasSubstr("aten::masked_fill_"), HasSubstr(kOverlap))));
  ops::masked_fill_(b, b, Scalar(false));  // full overlap is allowed
  EXPECT_THAT(values(b), ElementsAre(0, 0, 0, 0));
}

// index_put_ and scatter_ refuse full overlap too (assert_no_overlap).
TEST(MemoryOverlapTest, IndexPutAndScatterRefuseAnyOverlap) {
  Tensor x = ops::tensor({0, 1, 2, 3}, {4});
  const Tensor i = ops::tensor({1, 2, 3}, {3}, DType::kInt64);
  EXPECT_THAT([&] { ops::index_put_(x, {i}, ops::slice(x, 0, 0, 3)); },
              ThrowsMessage<Error>(AllOf(HasSubstr("aten::index_put_"), HasSubstr(kOverlap))));
  const Tensor all = ops::tensor({0, 1, 2, 3}, {4}, DType::kInt64);
  EXPECT_THAT([&] { ops::index_put_(x, {all}, x); }, ThrowsMessage<Error>(HasSubstr(kOverlap)));
  Tensor l = ops::tensor({0, 1, 2}, {3}, DType::kInt64);
  EXPECT_THAT([&] { ops::index_put_(l, {l}, ops::tensor({5, 6, 7}, {3}, DType::kInt64)); },
              ThrowsMessage<Error>(HasSubstr(kOverlap)));  // the index is self
  // One bool mask and a one-element value go to masked_fill_: the value may alias self.
  const Tensor mask = ops::tensor({0, 1, 0, 1}, {4}, DType::kBool);
  ops::index_put_(x, {mask}, ops::select(x, 0, 0));
  EXPECT_THAT(values(x), ElementsAre(0, 0, 2, 0));

  Tensor y = ops::tensor({0, 1, 2, 3}, {4});
  Tensor a = ops::slice(y, 0, 1, 4);
  const Tensor j = ops::tensor({0, 1, 2}, {3}, DType::kInt64);
  EXPECT_THAT([&] { ops::scatter_(a, 0, j, ops::slice(y, 0, 0, 3)); },
              ThrowsMessage<Error>(AllOf(HasSubstr("aten::scatter_"), HasSubstr(kOverlap))));
  EXPECT_THAT([&] { ops::scatter_(y, 0, ops::tensor({0, 1, 2, 3}, {4}, DType::kInt64), y); },
              ThrowsMessage<Error>(HasSubstr(kOverlap)));
  EXPECT_THAT([&] { ops::scatter_add_(a, 0, j, ops::slice(y, 0, 0, 3)); },
              ThrowsMessage<Error>(AllOf(HasSubstr("aten::scatter_add_"), HasSubstr(kOverlap))));
  Tensor e = ops::expand(ops::tensor({1}, {1}), {3});
  EXPECT_THAT([&] { ops::scatter_(e, 0, j, Scalar(2.0)); }, ThrowsMessage<Error>(HasSubstr("more than one element")));
  EXPECT_THAT(values(y), ElementsAre(0, 1, 2, 3));
}

// Every op of the table that writes its self, given an expanded self (stride
// 0): PyTorch 1.13 raises assert_no_internal_overlap's text but for fill_,
// zero_, fill_.Tensor, masked_fill_ and index_put_ (the last two warn only), squeeze_,
// t_, transpose_, unsqueeze_ and as_strided_ (restrides). A new in-place row fails here until it is listed.
TEST(MemoryOverlapTest, EveryInPlaceOpJudgesAnExpandedSelfAsPyTorch) {
  constexpr const char* kInternal =
      "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
      "Please clone() the tensor before performing the operation.";
  using Call = std::function<void(Tensor&, Device)>;
  auto opts = [](DType dt, Device d) { return TensorOptions{.dtype = dt, .device = d}; };
  auto index = [&](Device d) { return ops::zeros({2, 3}, opts(DType::kInt64, d)); };
  auto mask = [&](Device d) { return ops::ones({2, 3}, opts(DType::kBool, d)); };
  auto call = [](OpId id, Tensor& e, const Scalar& v) {
    Dispatcher::singleton().call<Tensor, const Tensor&, const Scalar&>(builtin_op(id), e, v);
  };
  const std::vector<std::optional<Tensor>> no_index;
  // (schema name, runs in PyTorch, call with e = zeros(3).expand(2, 3))
  std::vector<std::tuple<std::string, bool, Call>> cases = {
      {"fill_.Scalar", true, [](Tensor& e, Device) { ops::fill_(e, 1); }},
      {"zero_", true, [](Tensor& e, Device) { ops::zero_(e); }},
      {"bernoulli_.float", false, [](Tensor& e, Device) { ops::bernoulli_(e, 0.5); }},
      {"uniform_", false, [](Tensor& e, Device) { ops::uniform_(e); }},
      {"normal_", false, [](Tensor& e, Device) { ops::normal_(e); }},
      {"copy_", false, [](Tensor& e, Device d) { ops::copy_(e, ops::ones({2, 3}, {.device = d})); }},
      {"masked_fill_.Scalar", true, [&](Tensor& e, Device d) { ops::masked_fill_(e, mask(d), 1); }},
      {"masked_fill_.Tensor", true, [&](Tensor& e, Device d) { ops::masked_fill_(e, mask(d), ops::full({}, 1)); }},
      {"add_.Tensor", false, [](Tensor& e, Device d) { ops::add_(e, ops::ones({2, 3}, {.device = d})); }},
      {"sub_.Tensor", false, [](Tensor& e, Device d) { ops::sub_(e, ops::ones({2, 3}, {.device = d})); }},
      {"mul_.Tensor", false, [](Tensor& e, Device d) { ops::mul_(e, ops::ones({2, 3}, {.device = d})); }},
      {"mul_.Scalar", false, [&](Tensor& e, Device) { call(OpId::mul__Scalar, e, 2); }},
      {"div_.Tensor", false, [](Tensor& e, Device d) { ops::div_(e, ops::ones({2, 3}, {.device = d})); }},
      {"div_.Scalar", false, [&](Tensor& e, Device) { call(OpId::div__Scalar, e, 2); }},
      {"add_.Scalar", false,
       [](Tensor& e, Device) {
         Dispatcher::singleton().call<Tensor, const Tensor&, const Scalar&, const Scalar&>(
             builtin_op(OpId::add__Scalar), e, Scalar(2), Scalar(1));
       }},
      {"round_.decimals", false, [](Tensor& e, Device) { ops::round_(e, 1); }},
      {"logical_and_", false, [&](Tensor& e, Device d) { ops::logical_and_(e, mask(d)); }},
      {"logical_or_", false, [&](Tensor& e, Device d) { ops::logical_or_(e, mask(d)); }},
      {"scatter_.src", false,
       [&](Tensor& e, Device d) { ops::scatter_(e, 1, index(d), ops::ones({2, 3}, {.device = d})); }},
      {"scatter_.value", false, [&](Tensor& e, Device d) { ops::scatter_(e, 1, index(d), Scalar(1.0)); }},
      {"scatter_add_", false,
       [&](Tensor& e, Device d) { ops::scatter_add_(e, 1, index(d), ops::ones({2, 3}, {.device = d})); }},
      {"scatter_reduce_.two", false,
       [&](Tensor& e, Device d) { ops::scatter_reduce_(e, 1, index(d), ops::ones({2, 3}, {.device = d}), "sum"); }},
      {"index_put_", true,
       [](Tensor& e, Device d) {
         ops::index_put_(e, {ops::zeros({1}, {.dtype = DType::kInt64, .device = d})}, ops::full({}, 1.0));
       }},
      {"_index_put_impl_", true,
       [](Tensor& e, Device d) {
         ops::_index_put_impl_(e, {ops::zeros({1}, {.dtype = DType::kInt64, .device = d})}, ops::full({}, 1.0), true);
       }},
      {"squeeze_.dim", true, [](Tensor& e, Device) { ops::squeeze_(e, 0); }},
      {"as_strided_", true, [](Tensor& e, Device) { ops::as_strided_(e, {3}, {1}); }},
      {"t_", true, [](Tensor& e, Device) { ops::t_(e); }},
      {"transpose_", true, [](Tensor& e, Device) { ops::transpose_(e, 0, 1); }},
      {"unsqueeze_", true, [](Tensor& e, Device) { ops::unsqueeze_(e, 0); }},
      {"fill_.Tensor", true, [](Tensor& e, Device d) { ops::fill_(e, ops::full({}, 1.0, {.device = d})); }},
      {"clamp_", false, [](Tensor& e, Device) { ops::clamp_(e, Scalar(0), Scalar(1)); }},
      {"clamp_min_", false, [](Tensor& e, Device) { ops::clamp_min_(e, Scalar(0)); }},
      {"clamp_min_.Tensor", false, [](Tensor& e, Device d) { ops::clamp_min_(e, ops::zeros({3}, {.device = d})); }},
      {"clamp_max_", false, [](Tensor& e, Device) { ops::clamp_max_(e, Scalar(1)); }},
      {"clamp_max_.Tensor", false, [](Tensor& e, Device d) { ops::clamp_max_(e, ops::zeros({3}, {.device = d})); }},
      {"clamp_.Tensor", false,
       [](Tensor& e, Device d) { ops::clamp_(e, std::optional<Tensor>(ops::zeros({3}, {.device = d})), std::nullopt); }},
      {"hardtanh_", false, [](Tensor& e, Device) { ops::hardtanh_(e); }},
      {"leaky_relu_", false, [](Tensor& e, Device) { ops::leaky_relu_(e); }},
      {"elu_", false, [](Tensor& e, Device) { ops::elu_(e); }},
      {"pow_.Scalar", false, [](Tensor& e, Device) { ops::pow_(e, Scalar(2)); }},
      {"pow_.Tensor", false, [](Tensor& e, Device d) { ops::pow_(e, ops::ones({3}, {.device = d})); }},
      {"addcmul_", false,
       [](Tensor& e, Device d) { ops::addcmul_(e, ops::ones({3}, {.device = d}), ops::ones({3}, {.device = d})); }},
      {"addcdiv_", false,
       [](Tensor& e, Device d) { ops::addcdiv_(e, ops::ones({3}, {.device = d}), ops::ones({3}, {.device = d})); }},
      {"lerp_.Scalar", false, [](Tensor& e, Device d) { ops::lerp_(e, ops::ones({3}, {.device = d}), 0.5); }},
      {"lerp_.Tensor", false,
       [](Tensor& e, Device d) { ops::lerp_(e, ops::ones({3}, {.device = d}), ops::ones({3}, {.device = d})); }},
  };
  // The unary rows' in-place forms (relu_, exp_, ...).
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) \
  cases.emplace_back(#name "_", false, [](Tensor& e, Device) { ops::name##_(e); });
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
  std::set<std::string> listed;
  for (const auto& [name, runs, fn] : cases) {
    listed.insert(name);
    for (Device d : {kCPU, kMeta}) {
      SCOPED_TRACE(name + " on " + d.str());
      const DType dt = name.starts_with("logical_") ? DType::kBool : DType::kFloat32;
      Tensor e = ops::expand(ops::zeros({3}, opts(dt, d)), {2, 3});
      if (runs) {
        EXPECT_NO_THROW(fn(e, d));
      } else {
        EXPECT_THAT([&] { fn(e, d); }, ThrowsMessage<Error>(HasSubstr(kInternal)));
      }
    }
  }
  for (const BuiltinOpInfo& row : builtin_op_table()) {
    if (!builtin_op(row.id).schema().is_mutable()) continue;
    const std::string_view schema = row.schema;
    EXPECT_TRUE(listed.contains(std::string(schema.substr(0, schema.find('(')))))
        << schema << " writes its self: add it to the cases above";
  }
}

// masked_fill_ into an expanded self runs, as PyTorch's (which warns): an
// address holds the value when any element referring to it is masked (values
// from torch 1.13).
TEST(MemoryOverlapTest, MaskedFillIntoAnExpandedSelfFillsEveryMaskedAddress) {
  Tensor base = ops::zeros({3});
  Tensor e = ops::expand(base, {2, 3});
  ops::masked_fill_(e, ops::tensor({1, 0, 0, 0, 1, 0}, {2, 3}, DType::kBool), 5);
  EXPECT_THAT(values(base), ElementsAre(5, 5, 0));
  Tensor grid = ops::view(ops::arange(6, {.dtype = DType::kFloat32}), {2, 1, 3});
  Tensor g = ops::expand(grid, {2, 2, 3});
  ops::masked_fill_(g, ops::tensor({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}, {2, 2, 3}, DType::kBool), -1);
  EXPECT_THAT(values(grid), ElementsAre(-1, 1, -1, 3, -1, 5));
  Tensor ints = ops::zeros({3}, {.dtype = DType::kInt64});
  Tensor ie = ops::expand(ints, {2, 3});
  ops::masked_fill_(ie, ops::tensor({1, 0, 0, 0, 1, 0}, {2, 3}, DType::kBool),
                    ops::full({}, 7, {.dtype = DType::kInt64}));
  EXPECT_THAT(values(ints), ElementsAre(7, 7, 0));
  // Large enough to run in parallel unexpanded; each column is masked in one row only.
  Tensor wide = ops::zeros({1, 4096});
  Tensor we = ops::expand(wide, {64, 4096});
  ops::masked_fill_(we, ops::eq(ops::view(ops::arange(64), {64, 1}), ops::remainder(ops::arange(4096), 64)), 1);
  EXPECT_EQ(ops::sum(wide).item<double>(), 4096);
}

// The checks are shared rules, so meta tensors raise them as the CPU does.
TEST(MemoryOverlapTest, MetaRaisesAsTheCpu) {
  Tensor x = ops::empty({2, 2}, {.device = kMeta});
  EXPECT_THAT([&] { ops::add_(x, ops::t(x)); }, ThrowsMessage<Error>(HasSubstr(kOverlap)));
  Tensor v = ops::empty({4}, {.device = kMeta});
  Tensor head = ops::slice(v, 0, 1, 4);
  EXPECT_THAT([&] { ops::copy_(head, ops::slice(v, 0, 0, 3)); }, ThrowsMessage<Error>(HasSubstr(kOverlap)));
  const Tensor i = ops::empty({3}, {.dtype = DType::kInt64, .device = kMeta});
  EXPECT_THAT([&] { ops::scatter_(head, 0, i, ops::slice(v, 0, 0, 3)); }, ThrowsMessage<Error>(HasSubstr(kOverlap)));
  EXPECT_THAT([&] { ops::index_put_(v, {i}, ops::slice(v, 0, 0, 3)); }, ThrowsMessage<Error>(HasSubstr(kOverlap)));
  ops::add_(x, x);
  ops::copy_(v, v);
}

// A fused in-place group whose root aliases another graph input at run time
// runs its ops one by one (Note [In-place fusion]), so add_ raises as in eager.
TEST(MemoryOverlapTest, FusedInPlaceGroupsDoNotBypassTheCheck) {
  auto mutate = [](const std::vector<Tensor>& in) {
    Tensor a = in[0];
    ops::add_(a, in[1]);
    ops::relu_(a);
    return std::vector<Tensor>{ops::neg(a)};
  };
  Graph g = make_fx(mutate)({ops::ones({4, 4}), ops::ones({4, 4})});
  const CompiledGraph run = fused_backend(g, {ops::ones({4, 4}), ops::ones({4, 4})});
  Tensor x = ops::arange(16, {.dtype = DType::kFloat32});
  Tensor m = ops::view(x, {4, 4});
  EXPECT_THAT([&] { run({m, ops::t(m)}); }, ThrowsMessage<Error>(HasSubstr(kOverlap)));
  EXPECT_EQ(values(x)[1], 1);  // nothing was written
  run({m, m});  // full overlap runs: m += m
  EXPECT_EQ(values(x)[1], 2);
}

}  // namespace memory_overlap_test
}  // namespace opspec
