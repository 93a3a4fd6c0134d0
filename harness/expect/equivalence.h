// equivalence.h: check_eager_compiled_equivalent, the check behind
// EXPECT_EAGER_COMPILED_EQUIVALENT: the same function eager and compiled,
// outputs compared with assert_close and, on a mismatch, the first op where
// the DebugMode logs of the two runs diverge.
#pragma once

#include <memory>
#include <type_traits>
#include <vector>

#include "harness/check_result.h"
#include "harness/debug_mode.h"
#include "harness/expect/assert_close.h"
#include "harness/tensor_hash.h"
#include "runtime/compile/compile.h"
#include "runtime/nn/module.h"

namespace opspec {

// EquivalenceOptions: how to compile, how to compare, which hash to log.
// NaNs in the same places are equal by default (as torch._dynamo.testing's
// `same`): a compiled run that keeps eager's NaNs is equivalent to it.
struct EquivalenceOptions {
  CompileOptions compile;
  // module: when set, the compiled run is compile(module) (an OptimizedModule,
  // called on the single input) and the eager run is fn, which should call module.
  std::shared_ptr<nn::Module> module;
  CloseOptions close{.equal_nan = true};
  HashKind hash = HashKind::kNorm;
};

// EquivalenceResult: the verdict and what it was based on.
struct EquivalenceResult {
  CheckResult result;
  std::vector<Tensor> eager_outputs, compiled_outputs;
  std::vector<DebugCall> eager_log, compiled_log;
  CompileStats stats;
};

// check_eager_compiled_equivalent: runs fn eagerly and compiled afresh
// (options.compile), both from the same random generator state (rand, randn
// and dropout draw the same numbers in each run, as torch._dynamo.testing
// re-seeds per run), each on copies of inputs made without dispatching (fn
// may mutate them; the caller's tensors are untouched), each under a
// DebugMode logging tensor hashes of options.hash, then compares the
// outputs, the inputs after the call and, for inputs that require grad, the
// gradients backward left in them, with assert_close(compiled, eager,
// options.close) (each run's copies of such inputs are leaves of their own). Failure message:
//   "eager and compiled (backend 'fused') results differ\n"    ("a custom backend" for backend_fn)
//   "output 0: Tensor-likes are not close!\n\nMismatched elements: 16 / 16 (100.0%)\n"
//   "Greatest absolute difference: ... at index (3,) (up to 1e-05 allowed)\n"
//   "Greatest relative difference: ...\n\n"                     ("input 0 after the call: ..." for inputs)
// then where the DebugMode logs part (see Note [Locating the divergence] in
// equivalence.cc): "DebugMode logs (log 1: eager, log 2: compiled): first
// divergence at entry 0: aten::relu output hash differs ..." when they align;
// "first divergent op both runs made: aten::add.Tensor (eager entry 2,
// compiled entry 2)\n  eager: ...\n  compiled: ...\nbefore it the runs made
// different entries (- eager only, + compiled only), where the divergence
// likely starts:\n- [1] aten::cos\n+ [1] aten::sin" when the compiled run made
// other ops (decompositions, fused kernels); "every entry both runs made has
// equal hashes; they differ in these entries ..., where the divergence may
// lie" (with a norm hash, a difference within its tolerance hides) + a sequence_diff of the
// entry names; or "the DebugMode logs show no divergence ...". Norm hashes are
// compared with the rtol in force. Exceptions from either run propagate;
// giving only one of rtol/atol throws as assert_close does.
EquivalenceResult check_eager_compiled_equivalent(const TracedFunction& fn, const std::vector<Tensor>& inputs,
                                                  const EquivalenceOptions& options = {});

// check_eager_compiled_equivalent: the same for any callable make_fx and
// compile take (a lambda of up to eight tensors, a function returning a tuple).
template <class Fn>
  requires(!std::is_convertible_v<Fn, TracedFunction>)
EquivalenceResult check_eager_compiled_equivalent(Fn fn, const std::vector<Tensor>& inputs,
                                                  const EquivalenceOptions& options = {}) {
  return check_eager_compiled_equivalent(internal::as_traced_function(std::move(fn)), inputs, options);
}

}  // namespace opspec
