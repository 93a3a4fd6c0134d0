// opcheck.h: opcheck, torch.library.opcheck for opspec ops: runs an op on
// sample inputs and checks that its kernels agree with its schema and with
// each other (CPU against Meta and fake tensors, eager against compiled), as
// a list of named sub-checks ("test_utils") with one verdict each.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/check_result.h"
#include "harness/expect/assert_close.h"
#include "runtime/dispatch/operator.h"

namespace opspec {

// Note [opcheck]
// A user op is a schema plus kernels registered separately per key (CPU,
// Meta, ...), and nothing ties them together: a Meta kernel that computes
// the wrong shape makes fake tensors, make_fx and compile() silently disagree
// with eager. opcheck runs the op once for real on each sample (on copies of
// its tensors: the caller's are untouched) and compares every other way of
// running it with that reference run:
//   test_schema                 what the kernel did against what the schema says:
//                               return count and types; a `Tensor(a!)` return is
//                               its mutated argument itself; an unannotated
//                               return is fresh (shares no input's storage);
//                               an argument not marked `(a!)` keeps its values
//                               (bitwise hash) and its sizes and strides.
//   test_autograd_registration  when a sample's output is floating point: the
//                               op has a derivative formula or decomposes
//                               (check_autograd_registered; skipped when no
//                               output is floating point).
//   test_faketensor             under FakeTensorMode (the Meta kernel on fake
//                               tensors): each output's sizes, strides, storage
//                               offset, dtype and device, and which arguments it
//                               aliases, equal the real run's.
//   test_meta                   the op called on meta tensors (the Meta kernel
//                               directly, no mode): sizes, strides, storage
//                               offset and dtype equal the real run's. Not in
//                               torch's list; opspec's fake tensors are the Meta
//                               kernel plus device rules, so this separates them.
//   test_aot_dispatch_static    compile(backend "aot_eager", fullgraph) of a call
//   test_aot_dispatch_dynamic   of the op, static or with every dim dynamic:
//                               outputs and mutated inputs equal eager's
//                               (check_eager_compiled_equivalent).
// Strides are compared where they matter: dims of size 1 (and empty tensors)
// may have any stride, as PyTorch's significant-strides comparison allows.
// Values are compared in the aot checks only; random ops are fine there
// because both runs start from the same generator state.

// OpSample: one call's arguments, as torch's (args, kwargs): positional
// values, then keyword values by name; missing ones take the schema's defaults.
struct OpSample {
  std::vector<Value> args;
  std::vector<std::pair<std::string, Value>> kwargs;
};

// OpcheckStatus: what became of one sub-check.
enum class OpcheckStatus : uint8_t { kPassed, kFailed, kSkipped };

// opcheck_status_name: "passed", "failed", "skipped".
std::string_view opcheck_status_name(OpcheckStatus s);

// OpcheckTest: one sub-check's verdict; message says why it failed or was
// skipped (one line per failing sample), empty when it passed.
struct OpcheckTest {
  std::string name;  // "test_schema", ...
  OpcheckStatus status = OpcheckStatus::kPassed;
  std::string message;
};

// OpcheckOptions: which sub-checks run (empty: opcheck_default_test_utils(),
// torch's defaults plus test_meta) and how the aot checks compare values.
struct OpcheckOptions {
  std::vector<std::string> test_utils;
  CloseOptions close{.equal_nan = true};
};

// OpcheckResult: the verdict (fails when any sub-check or sample failed),
// then each requested sub-check in the order requested.
struct OpcheckResult {
  CheckResult result;
  std::vector<OpcheckTest> tests;

  // find: the sub-check named name, or nullptr when it was not requested.
  const OpcheckTest* find(std::string_view name) const;
  // summary: one line per sub-check: "test_schema: passed",
  // "test_autograd_registration: skipped: no sample gave a floating-point output", "test_meta: failed".
  std::string summary() const;
};

// check_autograd_registered: op can be differentiated: it is composite (its
// parts record themselves), has a derivative formula (autograd::find_formula),
// makes tensors outside the graph (factories, detach) or returns no tensor.
// Failure: "myops::foo has kernels but no derivative formula and is not
// composite, so backward through it fails with ...". The check behind
// EXPECT_OP_AUTOGRAD_REGISTERED and opcheck's test_autograd_registration.
CheckResult check_autograd_registered(const OperatorHandle& op);

// opcheck_all_test_utils: every sub-check name opcheck knows, in the order it runs them.
const std::vector<std::string>& opcheck_all_test_utils();
// opcheck_default_test_utils: test_schema, test_autograd_registration,
// test_faketensor, test_meta, test_aot_dispatch_dynamic.
const std::vector<std::string>& opcheck_default_test_utils();

// opcheck: runs the requested sub-checks of op on each sample (See Note
// [opcheck]). Failure message, one block per failed sub-check:
//   "opcheck(myops::bad): 2 of 5 checks failed: test_faketensor test_meta\n"
//   "test_faketensor: FakeTensorMode (the Meta kernel) gives output 0 sizes [3, 2] ...\n"
//   "test_meta: the Meta kernel gives output 0 sizes [3, 2] where the CPU kernel
//    gives [2, 3], for sample 0: myops::bad(f32[3, 2])"
// (a sub-check's lines after the first, e.g. assert_close's, indented by two).
// A sample that does not bind to the schema, or whose real run raises, fails
// the result ("sample 1: the CPU kernel raised: ...") and is left out of the
// sub-checks. An unknown test_util name throws opspec::Error listing the known ones.
OpcheckResult opcheck(const OperatorHandle& op, const std::vector<OpSample>& samples,
                      const OpcheckOptions& options = {});
// opcheck: the same for an op named "aten::add.Tensor" or "myops::foo"
// (an unknown name throws the dispatcher's error).
OpcheckResult opcheck(std::string_view op_name, const std::vector<OpSample>& samples,
                      const OpcheckOptions& options = {});

}  // namespace opspec
