// vector_math_benchmark.cc: BM_VectorMath/<fn>/opspec: sin, cos, exp, log,
// tanh, erf and sigmoid on 4M f32 as opspec's eager ops compute them
// (kernels/common/vec_math.h in the wide clones), against the same work in
// libmvec (vector_math_baseline_benchmark.cc) and SLEEF
// (vector_math_sleef_benchmark.cc, built where SLEEF is installed). The
// evaluation is in benchmarks/README.md ("Vector math").
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "benchmarks/vector_math_cases.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace {

Tensor apply(vector_math_cases::Fn f, const Tensor& x) {
  using vector_math_cases::Fn;
  switch (f) {
    case Fn::kSin: return ops::sin(x);
    case Fn::kCos: return ops::cos(x);
    case Fn::kExp: return ops::exp(x);
    case Fn::kLog: return ops::log(x);
    case Fn::kTanh: return ops::tanh(x);
    case Fn::kErf: return ops::erf(x);
    case Fn::kSigmoid: return ops::sigmoid(x);
  }
  return x;
}

void BM_VectorMathOpspec(benchmark::State& state, vector_math_cases::Fn f) {
  const std::vector<float> v = vector_math_cases::inputs(f);
  const Tensor x = ops::tensor(std::vector<double>(v.begin(), v.end()), {static_cast<int64_t>(v.size())});
  for (auto _ : state) benchmark::DoNotOptimize(apply(f, x));
  state.SetItemsProcessed(state.iterations() * x.numel());
}

[[maybe_unused]] const bool kRegistered = [] {
  for (const vector_math_cases::Fn f : vector_math_cases::kAll) {
    benchmark::RegisterBenchmark((std::string("BM_VectorMath/") + vector_math_cases::name(f) + "/opspec").c_str(),
                                 BM_VectorMathOpspec, f)
        ->UseRealTime();
  }
  return true;
}();

}  // namespace
}  // namespace opspec
