// Records the aten ops each composite dispatches, with a dispatch mode, and
// checks them against PyTorch's sequence. Sequences come from PyTorch 2.x's
// CompositeImplicitAutograd kernels; where 2.x and 1.13 agree they were also
// checked against python3-torch 1.13 with a TorchDispatchMode.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/dispatch/mode.h"
#include "runtime/fake/fake_tensor.h"
#include "runtime/ops/layout_cases_test_util.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace decompositions_test {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::ThrowsMessage;

// Records op names and, for kwarg checks, each op's non-default keyword arguments.
class RecordingMode : public DispatchMode {
 public:
  bool dispatch(OpCall& call) override {
    names.push_back(call.name());
    std::string kw;
    const auto& args = call.op().schema().arguments();
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i].kwarg_only) continue;
      const Value& v = call.arg(i);
      if (args[i].default_value ? v == *args[i].default_value : v.is_none()) continue;
      kw += (kw.empty() ? "" : ", ") + args[i].name + "=" + v.repr();
    }
    kwargs.push_back(kw);
    call.proceed();
    return true;
  }
  std::vector<std::string> names;
  std::vector<std::string> kwargs;
};

template <class F>
std::vector<std::string> ops_of(F&& f) {
  RecordingMode mode;
  {
    ModeGuard g(mode);
    f();
  }
  return mode.names;
}

class DecompositionTest : public ::testing::Test {
 protected:
  void SetUp() override { manual_seed(0); }
  Tensor x2 = ops::randn({4, 3});
  Tensor w = ops::randn({5, 3});
  Tensor b = ops::randn({5});
  Tensor x3 = ops::randn({2, 4, 3});
  Tensor x1 = ops::randn({3});
};

TEST_F(DecompositionTest, Linear) {
  EXPECT_THAT(ops_of([&] { ops::linear(x2, w, b); }), ElementsAre("aten::t", "aten::addmm"));
  EXPECT_THAT(ops_of([&] { ops::linear(x2, w); }), ElementsAre("aten::t", "aten::mm"));
  // _flatten_nd_linear (PyTorch 2.5+) for a contiguous input of any other rank, 1-D included.
  EXPECT_THAT(ops_of([&] { ops::linear(x3, w, b); }),
              ElementsAre("aten::view", "aten::t", "aten::addmm", "aten::view"));
  EXPECT_THAT(ops_of([&] { ops::linear(x1, w, b); }),
              ElementsAre("aten::view", "aten::t", "aten::addmm", "aten::view"));
  const Tensor strided = ops::transpose(x3, 0, 1);
  EXPECT_THAT(ops_of([&] { ops::linear(strided, w, b); }),
              ElementsAre("aten::t", "aten::expand", "aten::view", "aten::expand", "aten::view", "aten::bmm",
                          "aten::_unsafe_view", "aten::add.Tensor"));
}

TEST_F(DecompositionTest, LinearValuesMatchTheUndecomposedMath) {
  const Tensor y = ops::linear(x2, w, b);
  const Tensor expected = ops::add(ops::mm(x2, ops::t(w)), b);
  EXPECT_TRUE(ops::allclose(y, expected, 1e-5, 1e-6));
  EXPECT_TRUE(ops::allclose(ops::linear(x1, w, b), ops::add(ops::mv(w, x1), b), 1e-5, 1e-6));
}

TEST_F(DecompositionTest, NumpyTIsPermute) {
  EXPECT_THAT(ops_of([&] { ops::numpy_T(x2); }), ElementsAre("aten::permute"));
  EXPECT_THAT(ops_of([&] { ops::numpy_T(x1); }), IsEmpty());
}

TEST_F(DecompositionTest, Matmul) {
  const Tensor wt = ops::t(w);
  EXPECT_THAT(ops_of([&] { ops::matmul(x2, wt); }), ElementsAre("aten::mm"));
  EXPECT_THAT(ops_of([&] { ops::matmul(x1, x1); }), ElementsAre("aten::dot"));
  EXPECT_THAT(ops_of([&] { ops::matmul(x2, x1); }), ElementsAre("aten::mv"));
  const Tensor v4 = ops::randn({4});
  EXPECT_THAT(ops_of([&] { ops::matmul(v4, x2); }), ElementsAre("aten::unsqueeze", "aten::mm", "aten::squeeze_.dim"));
  EXPECT_THAT(ops_of([&] { ops::matmul(x3, wt); }), ElementsAre("aten::view", "aten::mm", "aten::_unsafe_view"));
  EXPECT_THAT(ops_of([&] { ops::matmul(x3, x1); }), ElementsAre("aten::view", "aten::mv", "aten::_unsafe_view"));
  const Tensor m54 = ops::randn({5, 4});
  EXPECT_THAT(ops_of([&] { ops::matmul(m54, x3); }),
              ElementsAre("aten::transpose.int", "aten::expand", "aten::view", "aten::expand", "aten::view",
                          "aten::bmm", "aten::_unsafe_view"));
  const Tensor b36 = ops::randn({2, 3, 6});
  EXPECT_THAT(ops_of([&] { ops::matmul(x3, b36); }),
              ElementsAre("aten::expand", "aten::view", "aten::expand", "aten::view", "aten::bmm",
                          "aten::_unsafe_view"));
}

TEST_F(DecompositionTest, MatmulValuesAndShapes) {
  const Tensor b36 = ops::randn({2, 3, 6});
  const Tensor out = ops::matmul(x3, b36);
  EXPECT_THAT(out.sizes(), ElementsAre(2, 4, 6));
  EXPECT_TRUE(ops::allclose(out, ops::bmm(x3, b36), 1e-5, 1e-6));
  const Tensor m54 = ops::randn({5, 4});
  const Tensor batched = ops::matmul(m54, x3);  // [5,4] @ [2,4,3] -> [2,5,3]
  EXPECT_THAT(batched.sizes(), ElementsAre(2, 5, 3));
  EXPECT_TRUE(ops::allclose(ops::select(batched, 0, 1), ops::mm(m54, ops::select(x3, 0, 1)), 1e-5, 1e-6));
  EXPECT_THAT(ops::matmul(x3, x1).sizes(), ElementsAre(2, 4));
  EXPECT_THROW(ops::matmul(ops::scalar_tensor(1.0), x1), Error);
}

TEST_F(DecompositionTest, SoftmaxFamilyAndLayerNorm) {
  EXPECT_THAT(ops_of([&] { ops::softmax(x2, 1); }), ElementsAre("aten::_softmax"));
  EXPECT_THAT(ops_of([&] { ops::softmax(x2, 1, DType::kFloat64); }), ElementsAre("aten::_to_copy", "aten::_softmax"));
  EXPECT_THAT(ops_of([&] { ops::log_softmax(x2, -1); }), ElementsAre("aten::_log_softmax"));
  const Tensor gamma = ops::ones({3}), beta = ops::zeros({3});
  EXPECT_THAT(ops_of([&] { ops::layer_norm(x2, {3}, gamma, beta); }), ElementsAre("aten::native_layer_norm"));
}

TEST_F(DecompositionTest, DropoutOnCpu) {
  EXPECT_THAT(ops_of([&] { ops::dropout(x2, 0.5, true); }),
              ElementsAre("aten::empty_like", "aten::bernoulli_.float", "aten::div_.Scalar", "aten::mul.Tensor"));
  EXPECT_THAT(ops_of([&] { ops::dropout(x2, 0.5, false); }), IsEmpty());
  const Tensor y = ops::dropout(ops::ones({1000}), 0.5, true);
  for (float v : y.to_vector<float>()) EXPECT_TRUE(v == 0.0f || v == 2.0f) << v;
}

// On cuda (fake tensors: no GPU needed) dropout is native_dropout only for
// 0 < p < 1 (is_fused_kernel_acceptable), so p == 1 is the CPU's mul by a
// zeros([]) there too and never reaches native_dropout's p == 1 shortcut.
TEST_F(DecompositionTest, DropoutOnCuda) {
  FakeTensorMode fake;
  ModeGuard guard(fake);
  const Tensor x = ops::randn({4, 3}, {.device = Device(DeviceType::kCUDA, 0)});
  EXPECT_THAT(ops_of([&] { ops::dropout(x, 0.5, true); }), ElementsAre("aten::native_dropout"));
  EXPECT_THAT(ops_of([&] { ops::dropout(x, 1.0, true); }), ElementsAre("aten::zeros", "aten::mul.Tensor"));
  EXPECT_THAT(ops_of([&] { ops::dropout(x2, 1.0, true); }), ElementsAre("aten::zeros", "aten::mul.Tensor"));
  EXPECT_THAT(ops_of([&] { ops::dropout(x, 0.0, true); }), IsEmpty());
  EXPECT_THAT(ops_of([&] { ops::dropout(x, 0.5, false); }), IsEmpty());
  EXPECT_EQ(ops::dropout(x, 1.0, true).device(), Device(DeviceType::kCUDA, 0));
}

TEST_F(DecompositionTest, PythonOperatorsAndScalars) {
  EXPECT_THAT(ops_of([&] { (void)(x2 + 1.0); }), ElementsAre("aten::add.Tensor"));
  EXPECT_THAT(ops_of([&] { (void)(1.0 - x2); }), ElementsAre("aten::rsub.Scalar"));
  EXPECT_THAT(ops_of([&] { (void)(1.0 / x2); }), ElementsAre("aten::reciprocal", "aten::mul.Tensor"));
  EXPECT_THAT(ops_of([&] { (void)(x2 * 2); }), ElementsAre("aten::mul.Tensor"));
  EXPECT_THAT(ops_of([&] { ops::gt(x2, 0); }), ElementsAre("aten::gt.Scalar"));
  EXPECT_THAT(ops_of([&] { ops::pow(x2, 2); }), ElementsAre("aten::pow.Tensor_Scalar"));
}

TEST_F(DecompositionTest, ReshapeFamily) {
  EXPECT_THAT(ops_of([&] { ops::reshape(x2, {12}); }), ElementsAre("aten::view"));
  EXPECT_THAT(ops_of([&] { ops::reshape(ops::t(x2), {12}); }),
              ElementsAre("aten::t", "aten::clone", "aten::_unsafe_view"));
  EXPECT_THAT(ops_of([&] { ops::flatten(x3); }), ElementsAre("aten::view"));
  EXPECT_THAT(ops_of([&] { ops::contiguous(ops::t(x2)); }), ElementsAre("aten::t", "aten::clone"));
  EXPECT_THAT(ops_of([&] { ops::contiguous(x2); }), IsEmpty());
  EXPECT_THAT(ops_of([&] { ops::to(x2, DType::kFloat64); }), ElementsAre("aten::_to_copy"));
  EXPECT_THAT(ops_of([&] { ops::to(x2, DType::kFloat32); }), IsEmpty());
  // Values survive the copy path of reshape.
  const Tensor r = ops::reshape(ops::t(x2), {12});
  EXPECT_EQ(r.to_vector<float>(), ops::contiguous(ops::t(x2)).to_vector<float>());
}

// contiguous(memory_format) and to(dtype, memory_format) against PyTorch
// 1.13's results for every layout class (runtime/ops/layout_cases_test_util.h):
// self when it is already laid out so (to: when the format is none, preserve
// or the one self suggests), else one clone / _to_copy passed the format.
TEST_F(DecompositionTest, ContiguousAndToFollowPyTorchsLayoutRules) {
  using Sig = Tensor(const Tensor&, DType, bool, bool, std::optional<int64_t>);
  static const TypedOp<Sig> to_dtype("aten::to.dtype");
  for (const layout_cases::LayoutCase& c : layout_cases::cases()) {
    SCOPED_TRACE(layout_cases::case_name(c));
    const Tensor self = layout_cases::input(c.input);
    const std::optional<int64_t> format = layout_cases::as_int(c.format);
    const std::string format_kwarg = format ? "memory_format=" + std::to_string(*format) : "";
    RecordingMode mode;
    if (c.format) {
      if (!c.contiguous.error.empty()) {
        EXPECT_THAT([&] { ops::contiguous(self, *c.format); },
                    ThrowsMessage<Error>(HasSubstr(std::string(c.contiguous.error))));
      } else {
        {
          ModeGuard g(mode);
          const Tensor r = ops::contiguous(self, *c.format);
          EXPECT_EQ(r.sizes(), self.sizes());
          EXPECT_EQ(std::vector<int64_t>(r.strides().begin(), r.strides().end()), c.contiguous.strides);
          EXPECT_EQ(r.is_same(self), c.contiguous_aliases);
          EXPECT_EQ(r.to_vector<float>(), self.to_vector<float>());
        }
        if (c.contiguous_aliases) {
          EXPECT_THAT(mode.names, IsEmpty());
        } else {
          EXPECT_THAT(mode.names, ElementsAre("aten::clone"));
          EXPECT_THAT(mode.kwargs, ElementsAre(format_kwarg));
        }
      }
    }
    if (!c.to.error.empty()) {
      EXPECT_THAT([&] { to_dtype(self, DType::kFloat32, false, false, format); },
                  ThrowsMessage<Error>(HasSubstr(std::string(c.to.error))));
      continue;
    }
    RecordingMode to_mode;
    {
      ModeGuard g(to_mode);
      const Tensor r = to_dtype(self, DType::kFloat32, false, false, format);
      EXPECT_EQ(std::vector<int64_t>(r.strides().begin(), r.strides().end()), c.to.strides);
      EXPECT_EQ(r.is_same(self), c.to_aliases);
    }
    if (c.to_aliases) {
      EXPECT_THAT(to_mode.names, IsEmpty());
    } else {
      EXPECT_THAT(to_mode.names, ElementsAre("aten::_to_copy"));  // torch: dtype=torch.float32, memory_format=...
      EXPECT_THAT(to_mode.kwargs, ElementsAre("dtype=torch.float32, " + format_kwarg));
    }
  }
}

TEST_F(DecompositionTest, ContiguousRefusesPreserveForAStridedSelf) {
  EXPECT_EQ(ops::contiguous(x2, MemoryFormat::kPreserve).is_same(x2), true);  // c10: the row-major test
  EXPECT_THAT([&] { ops::contiguous(ops::t(x2), MemoryFormat::kPreserve); },
              ThrowsMessage<Error>(HasSubstr(
                  "aten::contiguous: preserve memory format is unsupported by the contiguous operator")));
  EXPECT_THAT([&] { ops::contiguous(ops::t(x2), MemoryFormat::kChannelsLast); },
              ThrowsMessage<Error>(HasSubstr("aten::clone: required rank 4 tensor to use channels_last format")));
  // copy=True copies in self's layout (preserve_format), as torch's x.t().to(torch.float32, copy=True).
  const Tensor copied = ops::to(ops::t(x2), DType::kFloat32, /*copy=*/true);
  EXPECT_EQ(copied.strides(), ops::t(x2).strides());
  EXPECT_FALSE(copied.is_alias_of(x2));
}

TEST_F(DecompositionTest, NarrowIsASliceOfItsDim) {
  EXPECT_THAT(ops_of([&] { ops::narrow(x2, 0, 1, 2); }), ElementsAre("aten::slice.Tensor"));
  const Tensor x = ops::reshape(ops::arange(0.0, 12.0), {3, 4});
  const Tensor n = ops::narrow(x, 1, -3, 2);  // columns 1 and 2
  EXPECT_EQ(n.sizes(), (SizeVec{3, 2}));
  EXPECT_EQ(n.to_vector<float>(), (std::vector<float>{1, 2, 5, 6, 9, 10}));
  EXPECT_TRUE(n.is_alias_of(x));
  EXPECT_EQ(ops::narrow(x, -2, 3, 0).sizes(), (SizeVec{0, 4}));  // empty at the end is allowed
  EXPECT_EQ(ops::narrow(x, 0, -3, 3).to_vector<float>(), x.to_vector<float>());
}

TEST_F(DecompositionTest, NarrowErrorsAreTorchs) {
  const Tensor x = ops::zeros({3, 4});
  auto error_of = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_THAT(error_of([&] { ops::narrow(x, 1, 3, 2); }),
              HasSubstr("aten::narrow: start (3) + length (2) exceeds dimension size (4)."));
  EXPECT_THAT(error_of([&] { ops::narrow(x, 1, 5, 0); }),
              HasSubstr("start out of range (expected to be in range of [-4, 4], but got 5)"));
  EXPECT_THAT(error_of([&] { ops::narrow(x, 0, 0, -1); }), HasSubstr("narrow(): length must be non-negative."));
  EXPECT_THAT(error_of([&] { ops::narrow(ops::zeros({}), 0, 0, 0); }),
              HasSubstr("narrow() cannot be applied to a 0-dim tensor."));
  EXPECT_THAT(error_of([&] { ops::narrow(x, 2, 0, 1); }), HasSubstr("aten::narrow"));  // dim out of range
}

TEST_F(DecompositionTest, FactoriesAndItem) {
  EXPECT_THAT(ops_of([&] { ops::randn({8, 8}); }), ElementsAre("aten::randn"));
  EXPECT_THAT(ops_of([&] { ops::zeros_like(x2); }), ElementsAre("aten::zeros_like"));
  EXPECT_THAT(ops_of([&] { ops::sum(x2).item(); }), ElementsAre("aten::sum", "aten::_local_scalar_dense"));
}

TEST_F(DecompositionTest, KeywordArgumentsMatchWhatPyTorchsFrontendPasses) {
  RecordingMode mode;
  {
    ModeGuard g(mode);
    ops::randn({8, 8});
    ops::to(x2, DType::kFloat64);
    ops::zeros_like(x2);
    ops::softmax(x2, 1, DType::kFloat64);
    ops::dropout(x2, 0.5, true);
  }
  ASSERT_EQ(mode.kwargs.size(), 9u);  // randn, _to_copy, zeros_like, _to_copy + _softmax, 4 from dropout
  EXPECT_EQ(mode.kwargs[0], "device=cpu, pin_memory=False");                       // randn
  EXPECT_EQ(mode.kwargs[1], "dtype=torch.float64");                                // _to_copy from .to()
  EXPECT_EQ(mode.kwargs[2], "dtype=torch.float32, layout=0, device=cpu, pin_memory=False");  // zeros_like
  EXPECT_EQ(mode.kwargs[3], "dtype=torch.float64, layout=0, device=cpu");          // softmax's toType
  EXPECT_EQ(mode.kwargs[5], "memory_format=0");                                    // dropout's empty_like
}

TEST_F(DecompositionTest, FunctionModeSeesCompositesWhole) {
  struct Recorder : FunctionMode {
    std::vector<std::string> names;
    bool dispatch(OpCall& call) override {
      names.push_back(call.name());
      call.proceed();
      return true;
    }
  };
  Recorder mode;
  {
    ModeGuard g(mode);
    ops::relu(ops::linear(x2, w, b));
    ops::softmax(x2, 1);
    ops::matmul(x2, ops::t(w));
  }
  EXPECT_THAT(mode.names, ElementsAre("aten::linear", "aten::relu", "aten::softmax.int", "aten::t", "aten::matmul"));
}

}  // namespace
}  // namespace opspec
