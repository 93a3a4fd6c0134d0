// opspec_gtest.h: opspec's GoogleTest/GoogleMock assertions, the one header
// tests include (link opspec::gtest). What it offers, by header:
//
// ops_assertions.h   EXPECT_OPS / ASSERT_OPS (aten level), EXPECT_FUNCTION_OPS /
//                    ASSERT_FUNCTION_OPS (function level): run a statement,
//                    match the recorded ops with any gMock matcher.
// op_matchers.h      Op("aten::add").WithShapes({{2, 3}, {2, 3}}).WithDtypes({...}),
//                    OpsInOrder(...), NoOp(...).
// compile_assertions.h
//                    EXPECT_EAGER_COMPILED_EQUIVALENT(fn, inputs [, options]),
//                    EXPECT_GRAPH_BREAKS(fn, inputs, n [, reasons...] [, options]),
//                    EXPECT_GRAPHS / EXPECT_RECOMPILES / EXPECT_FUSED_KERNELS
//                    (fn, inputs|calls, n [, options]), and ASSERT_ forms.
// opcheck_assertions.h
//                    EXPECT_OPCHECK(op, samples [, options]) / ASSERT_OPCHECK:
//                    torch.library.opcheck (schema, Meta, fake tensors, compile).
// autograd_assertions.h
//                    EXPECT_GRADCHECK(f, inputs [, options]) / ASSERT_GRADCHECK:
//                    torch.autograd.gradcheck; EXPECT_OP_AUTOGRAD_REGISTERED(op).
// tensor_assertions.h
//                    EXPECT_TENSOR_EQ(actual, expected), EXPECT_TENSOR_CLOSE(actual,
//                    expected [, .rtol = r, .atol = a]): torch.testing's comparisons.
//                    EXPECT_STRIDES(t, {1, 3}): Tensor.stride() exactly.
// text_assertions.h  EXPECT_DEBUG_STRING(statement, "golden") (+ _WITH(options, ...)),
//                    with accept mode (OPSPEC_ACCEPT=1, accept.h), and
//                    EXPECT_FILECHECK(text, checks [, options]); ASSERT_ forms.
//
// make_tensor.h      opspec::testing::make_tensor (torch.testing.make_tensor).
// And the ops (runtime/ops/ops.h) the examples call.
//
// Every macro streams extra text like gtest's (`EXPECT_OPS(s, m) << "why";`)
// and fails with a compact expected-vs-actual message rather than a dump.
// opspec::testing (make_tensor) shares its name with gtest's ::testing: after
// `using namespace opspec;` write ::testing:: and opspec::testing:: in full.
// Example (compiled and run as readme_example_test.cc):
//
//   #include "harness/gtest/opspec_gtest.h"
//   using ::testing::ElementsAre;
//   using namespace opspec;
//
//   TEST(MyOp, Decomposes) {
//     Tensor x = ops::randn({4, 4});
//     EXPECT_OPS(ops::mm(ops::relu(x), x), ElementsAre("aten::relu", "aten::mm"));
//     EXPECT_OPS({ auto h = ops::relu(x); ops::add(h, h); },
//                OpsInOrder("relu", Op("add").WithShapes({{4, 4}, {4, 4}})));
//     EXPECT_EAGER_COMPILED_EQUIVALENT([](const Tensor& a) { return ops::relu(a); }, {x},
//                                      {.backend = "fused"});
//   }
#pragma once

#include "harness/expect/make_tensor.h"
#include "harness/gtest/accept.h"
#include "harness/gtest/autograd_assertions.h"
#include "harness/gtest/compile_assertions.h"
#include "harness/gtest/op_matchers.h"
#include "harness/gtest/opcheck_assertions.h"
#include "harness/gtest/ops_assertions.h"
#include "harness/gtest/tensor_assertions.h"
#include "harness/gtest/text_assertions.h"
#include "runtime/ops/ops.h"
