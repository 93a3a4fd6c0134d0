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
#include "runtime/core/memory_format.h"
#include "runtime/fake/fake_tensor.h"
#include "runtime/ops/op_crossref_samples_test_util.h"

namespace opspec {
namespace op_crossref_test {

// Note [CUDA op crossref]
// For each op and seed, op_crossref_test's call (random_call) runs on the
// CPU and on copies of its tensors on cuda:0 (cpu device arguments, and a
// factory's device=None, become cuda:0). A copy keeps its tensor's sizes,
// strides, offset and storage (copy_to_cuda), so views and ops that read the
// storage itself (as_strided) see what the CPU sees: a strided slice laid out
// densely let as_strided_ reach on the CPU what it refused on cuda. Where the
// CPU succeeds, CUDA must succeed with results on cuda of the same dtypes,
// sizes and significant strides (as the Meta crossref compares them; the
// CUDA kernels lay results out as the CPU's, except kCudaLayouts, where
// PyTorch's CUDA kernels do otherwise), and values as result_mismatch
// compares them (op_crossref_test_util.h: floats within a few units in the
// last place of max(4, |cpu|), NaN where the CPU has NaN, integers and bools
// exactly). Values are not compared for ops whose results are unspecified
// (empty*) or random (the CPU and CUDA generators share their Philox streams,
// but the draws' order per element is the kernels'), attention's dropout_p > 0
// included. Where the CPU refuses a
// call, CUDA may refuse it too or (for checks PyTorch's CUDA kernels make on
// the device, like index bounds) not; OPSPEC_CROSSREF_TRACE=1 lists those.
// Anything but opspec::Error thrown fails. OPSPEC_CROSSREF_SEEDS sets the
// calls per op (default 64; ci/gpu-run sets 2 under compute-sanitizer).

// kCudaLayouts: ops whose CUDA results PyTorch's CUDA kernels lay out
// otherwise than its CPU kernels, as opspec's do; their results must have the
// sizes and strides fake cuda tensors answer (fake_cuda_mismatch).
constexpr std::string_view kCudaLayouts[] = {
    "aten::roll",                     // row-major (roll_cuda), where the CPU's keeps channels-last
    "aten::native_dropout_backward",  // empty_like(grad, grad.suggest_memory_format())
    "aten::native_group_norm",           // Y row-major (X made contiguous), the CPU's in X's format
    "aten::native_group_norm_backward",  // dX likewise
    "aten::native_batch_norm",           // empty_like(self) (Note [Batch norm on CUDA])
    "aten::native_batch_norm_backward",  // row-major but in training on a channels-last input
};

// compared_results: the results of a call compared with the CPU's: all but
// native_batch_norm's saves in eval, which PyTorch's CUDA kernel fills with C
// elements where the CPU's are empty (Note [Batch norm on CUDA]).
Stack compared_results(std::string_view name, const Stack& args, const Stack& results) {
  if (name == "aten::native_batch_norm" && args.size() > 5 && args[5].is_bool() && !args[5].to_bool()) {
    return Stack(results.begin(), results.begin() + std::min<size_t>(1, results.size()));
  }
  return results;
}

// copy_to_cuda: t on cuda:0 with its sizes, strides, offset and storage: a
// fresh dense copy where t is one, else its whole storage viewed as t is.
Tensor copy_to_cuda(const Tensor& t) {
  const bool whole = is_non_overlapping_and_dense(t) && t.storage_offset() == 0 &&
                     static_cast<int64_t>(t.impl()->storage()->nbytes()) == t.nbytes();
  return whole ? testing::to_cuda(t) : testing::to_cuda_as_strided(t);
}

// on_cuda: v with its tensors copied to cuda:0 (copy_to_cuda) and a cpu device made cuda:0.
Value on_cuda(const Value& v) {
  if (v.is_tensor()) {
    const Tensor& t = v.to_tensor();
    return t.defined() ? Value(copy_to_cuda(t)) : v;
  }
  if (v.is_tensor_list()) {
    std::vector<Tensor> l;
    for (const Tensor& t : v.to_tensor_list()) l.push_back(t.defined() ? copy_to_cuda(t) : t);
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

// strides_mismatch: "" when every tensor result of cuda has cpu's significant
// strides (op_crossref_test_util.h), else the first difference.
std::string strides_mismatch(const Stack& cuda, const Stack& cpu) {
  for (size_t i = 0; i < cpu.size() && i < cuda.size(); ++i) {
    const std::vector<Tensor> c = tensors_of(cuda[i]), w = tensors_of(cpu[i]);
    for (size_t j = 0; j < w.size() && j < c.size(); ++j) {
      if (significant_strides(c[j]) != significant_strides(w[j])) {
        return "result " + std::to_string(i) + ": cuda " + significant_strides(c[j]) + ", cpu " +
               significant_strides(w[j]);
      }
    }
  }
  return "";
}

// fake_of: v with its tensors replaced by mode's fakes of them (same geometry and device, no data).
Value fake_of(FakeTensorMode& mode, const Value& v) {
  if (v.is_tensor()) {
    const Tensor& t = v.to_tensor();
    return t.defined() ? Value(mode.from_real(t)) : v;
  }
  if (v.is_tensor_list()) {
    std::vector<Tensor> l;
    for (const Tensor& t : v.to_tensor_list()) l.push_back(t.defined() ? mode.from_real(t) : t);
    return l;
  }
  return v;
}

// fake_cuda_mismatch: "" when the call on fakes of its cuda arguments (Meta
// standing in for the CUDA kernels: Note [Meta kernels standing in for a
// device]) gives results of the real ones' sizes and significant strides,
// else the first difference.
std::string fake_cuda_mismatch(const OperatorHandle& op, const Stack& cuda_args, const Stack& cuda_results) {
  FakeTensorMode mode;
  ModeGuard guard(mode);
  Stack fake_args;
  for (const Value& v : cuda_args) fake_args.push_back(fake_of(mode, v));
  const Outcome fake = run(op, fake_args);
  if (fake.kind != Outcome::kOk) return "fake cuda tensors threw: " + fake.message;
  for (size_t i = 0; i < cuda_results.size() && i < fake.results.size(); ++i) {
    const std::vector<Tensor> c = tensors_of(cuda_results[i]), f = tensors_of(fake.results[i]);
    for (size_t j = 0; j < c.size() && j < f.size(); ++j) {
      if (c[j].defined() != f[j].defined() || !c[j].defined()) continue;
      if (c[j].sizes() != f[j].sizes() || significant_strides(c[j]) != significant_strides(f[j])) {
        return "result " + std::to_string(i) + ": cuda " + c[j].meta_str() + ", fake cuda " + f[j].meta_str();
      }
    }
  }
  return "";
}

// draws_dropout: the call drops out at random (attention's dropout_p > 0),
// so its values, drawn per device in the kernels' order, are not compared.
bool draws_dropout(const OperatorHandle& op, const Stack& args) {
  const std::vector<Argument>& params = op.schema().arguments();
  for (size_t i = 0; i < args.size() && i < params.size(); ++i) {
    if (params[i].name == "dropout_p" && args[i].is_double() && args[i].to_double() != 0) return true;
  }
  return false;
}

// is_cuda_layout_op: name is one of kCudaLayouts.
bool is_cuda_layout_op(std::string_view name) {
  return std::find(std::begin(kCudaLayouts), std::end(kCudaLayouts), name) != std::end(kCudaLayouts);
}

// cuda_layout_differs: an op of kCudaLayouts, or a convolution (aten::conv*)
// with a float64 tensor, which cuDNN keeps contiguous where the CPU's may be
// channels-last (conv_format_cuda in conv.cc).

bool cuda_layout_differs(std::string_view name, const Stack& args) {
  if (is_cuda_layout_op(name)) return true;
  if (!name.starts_with("aten::conv")) return false;
  return std::any_of(args.begin(), args.end(), [](const Value& v) {
    const std::vector<Tensor> ts = tensors_of(v);
    return std::any_of(ts.begin(), ts.end(),
                       [](const Tensor& t) { return t.defined() && t.dtype() == DType::kFloat64; });
  });
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
    if (!op_selected(name)) continue;  // OPSPEC_CROSSREF_OP=aten::name: that op alone
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
      } else if (const std::string m = result_mismatch(compared_results(name, args, cuda.results),
                                                            compared_results(name, args, cpu.results),
                                                            !values_unspecified(name) && !draws_dropout(*op, args));
                 !m.empty()) {
        problems.push_back(what + ": cuda and cpu differ: " + m);
      } else if (const std::string d = off_cuda(cuda.results); !d.empty()) {
        problems.push_back(what + ": " + d);
      } else if (const std::string l = cuda_layout_differs(name, args) ? "" : strides_mismatch(cuda.results, cpu.results);
                 !l.empty()) {
        problems.push_back(what + ": cuda and cpu lay results out differently: " + l);
      } else if (const std::string f = is_cuda_layout_op(name) ? fake_cuda_mismatch(*op, cuda_args, cuda.results) : "";
                 !f.empty()) {
        problems.push_back(what + ": fake cuda tensors answer otherwise: " + f);
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
