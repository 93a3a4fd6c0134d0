// Every aten op with a CUDA kernel (and every composite) called with the
// Meta crossref test's random arguments and samples, on the CPU and on CUDA
// copies, as ggml's test-backend-ops runs each op case on every backend
// against the CPU. Skipped without a GPU (ci/gpu-run runs it). See Note
// [CUDA op crossref].
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cuda/cuda_test_util.h"
#include "runtime/ops/op_crossref_samples_test_util.h"

namespace opspec {
namespace op_crossref_test {

// Note [CUDA op crossref]
// For each op and seed, op_crossref_test's call (random_call) runs on the
// CPU and on copies of its tensors on cuda:0 (cpu device arguments, and a
// factory's device=None, become cuda:0). Where the CPU succeeds, CUDA must succeed with results on cuda of
// the same dtypes and sizes, and values as result_mismatch compares them
// (op_crossref_test_util.h: floats within a few units in the last place of
// max(4, |cpu|), NaN where the CPU has NaN, integers and bools exactly). Values are not compared for ops whose
// results are unspecified (empty*) or random (the CPU and CUDA generators
// share their Philox streams, but the draws' order per element is the
// kernels'). Where the CPU refuses a call, CUDA may refuse it too or (for
// checks PyTorch's CUDA kernels make on the device, like index bounds) not;
// OPSPEC_CROSSREF_TRACE=1 lists those. Anything but opspec::Error thrown
// fails. OPSPEC_CROSSREF_SEEDS sets the calls per op (default 64; ci/gpu-run
// sets 2 under compute-sanitizer).

// on_cuda: v with its tensors copied to cuda:0 and a cpu device made cuda:0.
Value on_cuda(const Value& v) {
  if (v.is_tensor()) {
    const Tensor& t = v.to_tensor();
    return t.defined() ? Value(testing::to_cuda(t)) : v;
  }
  if (v.is_tensor_list()) {
    std::vector<Tensor> l;
    for (const Tensor& t : v.to_tensor_list()) l.push_back(t.defined() ? testing::to_cuda(t) : t);
    return l;
  }
  if (v.is_device() && v.to_device().is_cpu()) return testing::kCuda0;
  return v;
}

// off_cuda: "" when every tensor result is on cuda, else the first that is not.
std::string off_cuda(const Stack& results) {
  for (const Value& v : results) {
    for (const Tensor& t : tensors_of(v)) {
      if (t.defined() && !t.device().is_cuda()) return "a result is on " + t.device().str() + ", not cuda";
    }
  }
  return "";
}

TEST(CudaOpCrossrefTest, RandomCallsMatchTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const int seeds = seeds_per_op();
  const bool trace = std::getenv("OPSPEC_CROSSREF_TRACE") != nullptr;
  std::vector<std::string> problems;
  int compared = 0, cuda_ran_refused = 0;
  for (const OperatorHandle* op : Dispatcher::singleton().ops()) {
    if (op->schema().ns() != "aten" || (!op->has_kernel(DispatchKey::kCUDA) && !op->is_composite())) continue;
    const std::string name = op->schema().qualified_name();
    for (int seed = 0; seed < seeds && problems.size() < 200; ++seed) {
      const Stack args = random_call(*op, seed);
      Stack cuda_args;
      for (const Value& v : args) cuda_args.push_back(on_cuda(v));  // before the CPU's in-place ops run
      // A factory's `device=None` is the cpu: its cuda call names cuda:0.
      const std::vector<Argument>& params = op->schema().arguments();
      for (size_t i = 0; i < cuda_args.size() && i < params.size(); ++i) {
        if (params[i].name == "device" && cuda_args[i].is_none()) cuda_args[i] = Value(testing::kCuda0);
      }
      const std::string what = describe_call(*op, args);
      if (trace) std::fprintf(stderr, "%s\n", what.c_str());
      const Outcome cpu = run(*op, args);
      const Outcome cuda = run(*op, cuda_args);
      if (cpu.kind == Outcome::kForeign) problems.push_back(what + " on cpu threw " + cpu.message);
      if (cuda.kind == Outcome::kForeign) problems.push_back(what + " on cuda threw " + cuda.message);
      if (cpu.kind == Outcome::kError && cuda.kind == Outcome::kOk) {
        ++cuda_ran_refused;
        if (trace) std::fprintf(stderr, "  cuda ran what the cpu refused: %s\n", cpu.message.c_str());
      }
      if (cpu.kind != Outcome::kOk) continue;
      if (cuda.kind != Outcome::kOk) {
        problems.push_back(what + ": the cpu ran it, cuda threw: " + cuda.message);
      } else if (const std::string m = result_mismatch(cuda.results, cpu.results, !values_unspecified(name));
                 !m.empty()) {
        problems.push_back(what + ": cuda and cpu differ: " + m);
      } else if (const std::string d = off_cuda(cuda.results); !d.empty()) {
        problems.push_back(what + ": " + d);
      } else {
        ++compared;
      }
    }
  }
  for (size_t i = 0; i < std::min<size_t>(problems.size(), 50); ++i) ADD_FAILURE() << problems[i];
  EXPECT_TRUE(problems.empty()) << problems.size() << " calls differ (the first 50 above)";
  // Most ops' calls reach their kernels on both devices.
  EXPECT_GT(compared, 100 * seeds) << cuda_ran_refused << " calls the cpu refused ran on cuda";
}

}  // namespace op_crossref_test
}  // namespace opspec
