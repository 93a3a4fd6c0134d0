// equivalence.h: check_eager_compiled_equivalent, the check behind
// EXPECT_EAGER_COMPILED_EQUIVALENT: the same function eager and compiled,
// outputs compared with assert_close and, on a mismatch, the first op where
// the DebugMode logs of the two runs diverge.
#pragma once

#include <vector>

#include "harness/check_result.h"
#include "harness/debug_mode.h"
#include "harness/expect/assert_close.h"
#include "harness/tensor_hash.h"
#include "runtime/compile/compile.h"

namespace opspec {

// EquivalenceOptions: how to compile, how to compare, which hash to log.
struct EquivalenceOptions {
  CompileOptions compile;
  CloseOptions close;
  HashKind hash = HashKind::kNorm;
};

// EquivalenceResult: the verdict and what it was based on.
struct EquivalenceResult {
  CheckResult result;
  std::vector<Tensor> eager_outputs, compiled_outputs;
  std::vector<DebugCall> eager_log, compiled_log;
  CompileStats stats;
};

// check_eager_compiled_equivalent: runs fn eagerly and compiled afresh, each
// on clones of inputs (fn may mutate them), each under a DebugMode logging
// tensor hashes of options.hash, and compares the outputs with assert_close.
// Failure message:
//   "eager and compiled (backend 'fused') outputs differ\n"
//   "output 0: Tensor-likes are not close!\n\nMismatched elements: ...\n"
//   "\nfirst divergent op: ..." (from diff_logs over the op entries of the two logs)
// An exception from either run propagates.
EquivalenceResult check_eager_compiled_equivalent(const TracedFunction& fn, const std::vector<Tensor>& inputs,
                                                  const EquivalenceOptions& options = {});

}  // namespace opspec
