// vector_math_cases.h: the functions BM_VectorMath times (sin, cos, exp, log,
// tanh, erf, sigmoid on 4M f32, on every core) and the inputs each gets, shared
// by the opspec, libmvec and SLEEF variants so their figures compare.
#pragma once

#include <cstdint>
#include <vector>

namespace opspec::vector_math_cases {

// kN: elements per call (16 MiB in, 16 MiB out: the chain benchmarks' size).
inline constexpr int64_t kN = int64_t{1} << 22;

// Fn: the functions, in the order the benchmarks are registered.
enum class Fn { kSin, kCos, kExp, kLog, kTanh, kErf, kSigmoid };
inline constexpr Fn kAll[] = {Fn::kSin, Fn::kCos, Fn::kExp, Fn::kLog, Fn::kTanh, Fn::kErf, Fn::kSigmoid};

inline const char* name(Fn f) {
  switch (f) {
    case Fn::kSin: return "sin";
    case Fn::kCos: return "cos";
    case Fn::kExp: return "exp";
    case Fn::kLog: return "log";
    case Fn::kTanh: return "tanh";
    case Fn::kErf: return "erf";
    case Fn::kSigmoid: return "sigmoid";
  }
  return "?";
}

// inputs: n values spread evenly over the range a model feeds f (log: positive).
inline std::vector<float> inputs(Fn f, int64_t n = kN) {
  const float lo = f == Fn::kLog ? 1e-3f : -10.0f, hi = f == Fn::kLog ? 100.0f : 10.0f;
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = lo + (hi - lo) * static_cast<float>(i % 100003) / 100003.0f;
  return x;
}

}  // namespace opspec::vector_math_cases
