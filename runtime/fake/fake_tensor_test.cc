// Tests for fake tensors and FakeTensorMode: metadata without data, meta
// kernels for every op, memoized conversion, device errors, no allocation.
#include "runtime/fake/fake_tensor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/core/allocator.h"
#include "runtime/dispatch/library.h"
#include "runtime/nn/layers.h"
#include "runtime/ops/op_table.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace fake_tensor_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

const Device kCuda{DeviceType::kCUDA, 0};

// Counts CPU allocations made during a scope.
class CpuAllocations {
 public:
  CpuAllocations() : before_((get_allocator(DeviceType::kCPU)->reset_peak_stats(), get_allocator(DeviceType::kCPU)->stats())) {}
  int64_t count() const { return get_allocator(DeviceType::kCPU)->stats().allocation_count - before_.allocation_count; }
  int64_t bytes() const { return get_allocator(DeviceType::kCPU)->stats().bytes_in_use - before_.bytes_in_use; }
  int64_t peak_bytes() const { return get_allocator(DeviceType::kCPU)->stats().peak_bytes - before_.bytes_in_use; }

 private:
  AllocatorStats before_;
};

TEST(MetaKernels, EveryNonCompositeBuiltinOpHasOne) {
  for (const BuiltinOpInfo& row : builtin_op_table()) {
    const OperatorHandle& op = builtin_op(row.id);
    if (op.is_composite()) continue;
    EXPECT_TRUE(op.has_kernel(DispatchKey::kMeta)) << op.name() << " has no meta kernel";
  }
}

TEST(MetaKernels, AnOpWithoutOneIsReportedByName) {
  static const bool registered = [] {
    Library lib("fake_test");
    lib.def("no_meta(Tensor x) -> Tensor", OpKind::kUnary)
        .impl("no_meta", DispatchKey::kCPU, [](const Tensor& x) { return ops::clone(x); });
    return true;
  }();
  (void)registered;
  const OperatorHandle& op = Dispatcher::singleton().get("fake_test::no_meta");
  FakeTensorMode fake;
  ModeGuard guard(fake);
  Stack stack{ops::zeros({2, 3})};
  EXPECT_THAT([&] { Dispatcher::singleton().call_boxed(op, stack); },
              ThrowsMessage<NoMetaKernelError>(HasSubstr("fake_test::no_meta has no meta kernel")));
  // A meta tensor outside any mode hits the same error.
  Stack meta_stack{ops::zeros({2}, {.device = kMeta})};
  EXPECT_THROW(Dispatcher::singleton().call_boxed(op, meta_stack), NoMetaKernelError);
}

TEST(FakeTensorMode, FactoriesReturnFakeTensorsOnTheRequestedDevice) {
  FakeTensorMode fake;
  ModeGuard guard(fake);
  const Tensor x = ops::randn({8, 8});
  EXPECT_TRUE(is_fake(x));
  EXPECT_THAT(x.sizes(), ElementsAre(8, 8));
  EXPECT_EQ(x.dtype(), DType::kFloat32);
  EXPECT_EQ(x.device(), kCPU);
  const Tensor y = ops::zeros({4}, {.dtype = DType::kFloat16, .device = kCuda});
  EXPECT_TRUE(is_fake(y));
  EXPECT_EQ(y.device(), kCuda);  // no GPU needed
  EXPECT_EQ(y.dtype(), DType::kFloat16);
  const Tensor z = ops::arange(10);
  EXPECT_EQ(z.dtype(), DType::kInt64);
  EXPECT_THAT(z.sizes(), ElementsAre(10));
}

TEST(FakeTensorMode, FakesOfTensorsThatRequireGradAreLeavesThatDo) {
  FakeTensorMode fake;
  Tensor w = ops::randn({2, 3});
  w.requires_grad_();
  const Tensor fw = fake.from_real(w);
  EXPECT_TRUE(is_fake(fw));
  EXPECT_TRUE(fw.requires_grad());
  EXPECT_TRUE(fw.is_leaf());
  EXPECT_FALSE(fake.from_real(ops::randn({2})).requires_grad());
  // Autograd records on fakes: an op's result has a grad_fn.
  ModeGuard g(fake);
  const Tensor y = ops::mul(fw, 2.0);
  EXPECT_TRUE(y.requires_grad());
  EXPECT_FALSE(y.is_leaf());
}

TEST(FakeTensorMode, GigabyteProgramsAllocateNoData) {
  CpuAllocations allocations;
  {
    FakeTensorMode fake;
    ModeGuard guard(fake);
    const Tensor a = ops::randn({1 << 16, 1 << 16});  // 16 GiB if real
    const Tensor b = ops::ones({1 << 16, 1 << 15});
    const Tensor c = ops::relu(ops::mm(a, b));
    const Tensor s = ops::sum(ops::softmax(c, 1));
    EXPECT_THAT(c.sizes(), ElementsAre(1 << 16, 1 << 15));
    EXPECT_EQ(s.dim(), 0);
  }
  EXPECT_EQ(allocations.count(), 0);
  EXPECT_EQ(allocations.bytes(), 0);
}

TEST(FakeTensorMode, ModelWithAGigabyteOfParametersAllocatesNothing) {
  CpuAllocations allocations;
  {
    FakeTensorMode fake;
    ModeGuard guard(fake);
    nn::Sequential model;
    model.push_back(std::make_shared<nn::Linear>(1 << 14, 1 << 14));  // 1 GiB of f32 weights
    model.push_back(std::make_shared<nn::ReLU>());
    int64_t param_bytes = 0;
    for (const auto& [name, p] : model.named_parameters()) {
      EXPECT_TRUE(is_fake(p)) << name;
      param_bytes += p.nbytes();
    }
    EXPECT_GE(param_bytes, int64_t{1} << 30);
    const Tensor y = model.forward(ops::randn({32, 1 << 14}));
    EXPECT_THAT(y.sizes(), ElementsAre(32, 1 << 14));
  }
  // Initialisation scales by C++ numbers (wrapped-number scalars, 8 bytes
  // each); no tensor data is ever allocated.
  EXPECT_LT(allocations.peak_bytes(), 1024);
  EXPECT_EQ(allocations.bytes(), 0);
}

TEST(FakeTensorMode, RealTensorsAreConvertedAndMemoized) {
  const Tensor real = ops::randn({4, 6});
  const Tensor view = ops::t(real);
  FakeTensorMode fake;
  const Tensor f1 = fake.from_real(real);
  const Tensor f2 = fake.from_real(real);
  EXPECT_TRUE(is_fake(f1));
  EXPECT_TRUE(f1.is_same(f2));
  EXPECT_EQ(fake.memo_size(), 1u);
  const Tensor fv = fake.from_real(view);
  EXPECT_TRUE(fv.is_alias_of(f1));  // one real storage, one fake storage
  EXPECT_THAT(fv.strides(), ElementsAre(1, 6));
  EXPECT_TRUE(fake.from_real(f1).is_same(f1));
  {
    ModeGuard guard(fake);
    const Tensor out = ops::add(real, real);
    EXPECT_TRUE(is_fake(out));
  }
  EXPECT_EQ(fake.memo_size(), 2u);
  fake.clear_memo();
  EXPECT_FALSE(fake.from_real(real).is_same(f1));
}

TEST(FakeTensorMode, MixingDevicesRaisesLikeARealRun) {
  FakeTensorMode fake;
  ModeGuard guard(fake);
  const Tensor a = ops::randn({4});
  const Tensor b = ops::randn({4}, {.device = kCuda});
  EXPECT_THAT([&] { ops::add(a, b); },
              ThrowsMessage<Error>(HasSubstr(
                  "aten::add.Tensor: Expected all tensors to be on the same device, but found at least two devices, "
                  "cpu and cuda:0!")));
  EXPECT_THAT([&] { ops::mm(ops::randn({2, 2}), ops::randn({2, 2}, {.device = kCuda})); },
              ThrowsMessage<Error>(HasSubstr("Expected all tensors to be on the same device")));
  // A cpu scalar may join a cuda op, as in a real run.
  const Tensor scaled = ops::mul(b, ops::scalar_tensor(2.0));
  EXPECT_EQ(scaled.device(), kCuda);
  EXPECT_EQ((b + 1.0).device(), kCuda);
  // copy_ and _to_copy move between devices.
  Tensor dst = ops::empty({4});
  ops::copy_(dst, b);
  EXPECT_EQ(dst.device(), kCPU);
  EXPECT_EQ(ops::to(b, kCPU).device(), kCPU);
}

TEST(FakeTensorMode, ReadingDataRaisesDataDependentOutputError) {
  FakeTensorMode fake;
  ModeGuard guard(fake);
  const Tensor x = ops::randn({3});
  EXPECT_THAT([&] { ops::sum(x).item(); },
              ThrowsMessage<DataDependentOutputError>(HasSubstr("aten::_local_scalar_dense: item() needs the value")));
  EXPECT_THAT([&] { x.to_vector<float>(); },
              ThrowsMessage<DataDependentOutputError>(HasSubstr("f32[3] is a fake tensor and has no data")));
  EXPECT_THROW(x.data_ptr<float>(), DataDependentOutputError);
  EXPECT_EQ(x.str(), "tensor(f32[3])");
}

TEST(FakeTensorMode, InPlaceOpsReturnTheirArgumentAndViewsAlias) {
  FakeTensorMode fake;
  ModeGuard guard(fake);
  Tensor x = ops::randn({4, 1, 3});
  const uint64_t version = x.impl()->version();
  const OperatorHandle& add_ = builtin_op(OpId::add__Tensor);
  Stack stack = add_.schema().bind({x, ops::ones({3})});
  add_.call_boxed(stack);
  EXPECT_TRUE(stack[0].to_tensor().is_same(x));
  EXPECT_GT(x.impl()->version(), version);
  ops::squeeze_(x, 1);
  EXPECT_THAT(x.sizes(), ElementsAre(4, 3));
  const Tensor xt = ops::t(x);
  EXPECT_TRUE(is_fake(xt));
  EXPECT_TRUE(xt.is_alias_of(x));
  EXPECT_THAT(xt.strides(), ElementsAre(1, 3));
  EXPECT_FALSE(ops::clone(x).is_alias_of(x));
}

TEST(FakeTensorMode, CompositesDecomposeAndPromotionFollowsRealRuns) {
  FakeTensorMode fake;
  ModeGuard guard(fake);
  const Tensor x = ops::randn({2, 4, 3});
  const Tensor w = ops::randn({5, 3});
  EXPECT_THAT(ops::linear(x, w, ops::randn({5})).sizes(), ElementsAre(2, 4, 5));
  EXPECT_THAT(ops::reshape(ops::transpose(x, 0, 2), {12, 2}).sizes(), ElementsAre(12, 2));
  const Tensor h = ops::randn({3}, {.dtype = DType::kFloat16});
  EXPECT_EQ((h + 1.0).dtype(), DType::kFloat16);
  EXPECT_EQ(ops::add(h, ops::ones({3}, {.dtype = DType::kFloat64})).dtype(), DType::kFloat64);
  // Shape errors are the meta kernels', i.e. the same as a real run's.
  EXPECT_THAT([&] { ops::mm(w, w); }, ThrowsMessage<Error>(HasSubstr("aten::mm")));
}

// A mode above the fake mode that catches an op's error (a cross-ref or a
// retrying handler) found meta views in place of its arguments.
TEST(FakeTensorMode, AFailedOpLeavesItsArgumentsAsTheyWere) {
  struct Catching : DispatchMode {
    bool dispatch(OpCall& call) override {
      try {
        call.proceed();
      } catch (const Error&) {
        for (size_t i = 0; i < call.num_args(); ++i) after.push_back(call.arg(i).to_tensor());
        throw;
      }
      return true;
    }
    std::vector<Tensor> after;
  } catching;
  FakeTensorMode fake;
  ModeGuard f(fake);
  const Tensor a = ops::ones({2, 3}), b = ops::ones({2, 3});
  {
    ModeGuard c(catching);
    EXPECT_THROW(ops::mm(a, b), Error);
  }
  ASSERT_EQ(catching.after.size(), 2u);
  EXPECT_TRUE(catching.after[0].is_same(a));
  EXPECT_TRUE(catching.after[1].is_same(b));
  EXPECT_TRUE(is_fake(catching.after[0]));
}

TEST(FakeTensors, WorkOutsideTheModeAndRejectRealPartners) {
  Tensor f;
  {
    FakeTensorMode fake;
    ModeGuard guard(fake);
    f = ops::randn({2, 3});
  }
  const Tensor g = ops::relu(f);  // the Fake key's kernel, no mode needed
  EXPECT_TRUE(is_fake(g));
  EXPECT_TRUE(is_fake(f * 2.0));
  EXPECT_THAT([&] { ops::add(f, ops::ones({2, 3})); },
              ThrowsMessage<Error>(HasSubstr("aten::add.Tensor: got a real tensor (f32[2, 3]) together with fake tensors")));
  {
    ExcludeModesGuard no_modes;  // fake tensors stay fake without the Python key
    EXPECT_TRUE(is_fake(ops::neg(f)));
  }
}

TEST(FakeTensors, MetaAndFakeTensorsDoNotMix) {
  FakeTensorMode fake;
  ModeGuard guard(fake);
  const Tensor m = ops::zeros({3}, {.device = kMeta});
  EXPECT_THAT([&] { ops::add(ops::zeros({3}), m); },
              ThrowsMessage<Error>(HasSubstr("Expected all tensors to be on the same device")));
}

TEST(FakeTensors, MakeFakeLikeCopiesGeometryOntoStorageOfItsOwn) {
  const Tensor like = internal::make_fake({2, 3}, {1, 2}, 1, DType::kFloat64, kCuda);  // not contiguous
  {
    // A dead CPU tensor of other geometry, whose objects the fake may reuse (Note [Recycled tensors]).
    Tensor dead = internal::make_tensor({4, 4, 4}, DType::kInt32, kCPU);
    dead.impl()->set_wrapped_number(true);
  }
  const Tensor fake = internal::make_fake_like(like);
  EXPECT_FALSE(fake.is_wrapped_number());
  EXPECT_EQ(fake.impl()->storage()->data(), nullptr);
  EXPECT_TRUE(is_fake(fake));
  EXPECT_FALSE(fake.is_same(like));
  EXPECT_FALSE(fake.is_alias_of(like));
  EXPECT_THAT(fake.sizes(), ElementsAre(2, 3));
  EXPECT_THAT(fake.strides(), ElementsAre(1, 2));
  EXPECT_EQ(fake.storage_offset(), 1);
  EXPECT_FALSE(fake.is_contiguous());
  EXPECT_EQ(fake.numel(), 6);
  EXPECT_EQ(fake.dtype(), DType::kFloat64);
  EXPECT_EQ(fake.device(), kCuda);
  EXPECT_EQ(fake.key_set(), like.key_set());
  EXPECT_EQ(fake.impl()->storage()->nbytes(), like.impl()->storage()->nbytes());
  EXPECT_TRUE(fake.impl()->storage()->device().is_meta());
  EXPECT_NE(fake.impl()->uid(), like.impl()->uid());
}

}  // namespace
}  // namespace opspec
