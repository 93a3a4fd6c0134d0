// vector_math_accuracy.cc: opspec_vector_math_accuracy, the accuracy half of
// the vector math evaluation (benchmarks/README.md, "Vector math"): for sin,
// cos, exp, log, tanh, erf and sigmoid, the largest error in ulp of opspec's
// functors (what its eager and fused kernels compute) and of SLEEF's 1.0-ulp
// functions (AVX-512 and AVX2 variants) against glibc's double-precision
// function rounded to float, over every 2^stride-th float (stride 0: all
// 2^32; default 6), and whether SLEEF's two variants agree bit for bit (NaNs
// of different payloads count as agreeing). Inputs whose exact result is
// subnormal are left out of the ulp figures: sigmoid's 1 / (1 + e^-x) (PyTorch's
// formula too) flushes those to 0 in every implementation.
// Built only where SLEEF is installed; run by hand: `opspec_vector_math_accuracy [stride]`.
#include "benchmarks/sleef_decls.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cfloat>

#include "kernels/common/elementwise_ops.h"

namespace {

using opspec::vector_math_cases::Fn;
using opspec::vector_math_cases::kAll;
using opspec::vector_math_cases::name;
using opspec::vector_math_cases::sleef16;
using opspec::vector_math_cases::sleef8;

float reference(Fn f, float xf) {
  const double x = xf;
  switch (f) {
    case Fn::kSin: return static_cast<float>(std::sin(x));
    case Fn::kCos: return static_cast<float>(std::cos(x));
    case Fn::kExp: return static_cast<float>(std::exp(x));
    case Fn::kLog: return static_cast<float>(std::log(x));
    case Fn::kTanh: return static_cast<float>(std::tanh(x));
    case Fn::kErf: return static_cast<float>(std::erf(x));
    case Fn::kSigmoid: return static_cast<float>(1.0 / (1.0 + std::exp(-x)));
  }
  return 0;
}

float ours(Fn f, float x) {
  namespace in = opspec::internal;
  switch (f) {
    case Fn::kSin: return in::SinOp{}(x);
    case Fn::kCos: return in::CosOp{}(x);
    case Fn::kExp: return in::ExpOp{}(x);
    case Fn::kLog: return in::LogOp{}(x);
    case Fn::kTanh: return in::TanhOp{}(x);
    case Fn::kErf: return in::ErfOp{}(x);
    case Fn::kSigmoid: return in::SigmoidOp{}(x);
  }
  return 0;
}

int64_t ordered(float v) {
  const int32_t b = std::bit_cast<int32_t>(v);
  return b < 0 ? -static_cast<int64_t>(b & 0x7fffffff) : b;
}
// ulp: the floats from got to want; a wrong class (NaN, infinity) counts as 2^32.
int64_t ulp(float got, float want) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got) ? 0 : int64_t{1} << 32;
  if (std::isinf(want) || std::isinf(got)) return got == want ? 0 : int64_t{1} << 32;
  return std::abs(ordered(got) - ordered(want));
}

}  // namespace

int main(int argc, char** argv) {
  const int stride = argc > 1 ? std::atoi(argv[1]) : 6;
  if (stride < 0 || stride > 20 || !__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("fma")) {
    std::fprintf(stderr, "usage: opspec_vector_math_accuracy [stride 0..20]; needs AVX-512 and FMA\n");
    return 2;
  }
  const int64_t count = (int64_t{1} << 32) >> stride;
  std::printf("%-8s %12s %12s %14s  (every 2^%d-th float, %lld inputs)\n", "fn", "opspec ulp", "sleef ulp",
              "sleef 16 vs 8", stride, static_cast<long long>(count));
  for (const Fn f : kAll) {
    int64_t worst_ours = 0, worst_sleef = 0, lane_diffs = 0;
#pragma omp parallel for schedule(dynamic, 4096) reduction(max : worst_ours, worst_sleef) reduction(+ : lane_diffs)
    for (int64_t block = 0; block < count / 16; ++block) {
      float x[16], a[16], b[16];
      for (int j = 0; j < 16; ++j) x[j] = std::bit_cast<float>(static_cast<uint32_t>((block * 16 + j) << stride));
      sleef16(f, x, a, 16);
      sleef8(f, x, b, 16);
      for (int j = 0; j < 16; ++j) {
        const float want = reference(f, x[j]);
        lane_diffs += std::bit_cast<uint32_t>(a[j]) != std::bit_cast<uint32_t>(b[j]) && !(a[j] != a[j] && b[j] != b[j]);
        if (want != 0 && std::abs(want) < FLT_MIN) continue;  // a subnormal result: see the header
        worst_ours = std::max(worst_ours, ulp(ours(f, x[j]), want));
        worst_sleef = std::max(worst_sleef, ulp(a[j], want));
      }
    }
    std::printf("%-8s %12lld %12lld %14lld\n", name(f), static_cast<long long>(worst_ours),
                static_cast<long long>(worst_sleef), static_cast<long long>(lane_diffs));
  }
  return 0;
}
