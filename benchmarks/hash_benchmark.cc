// hash_benchmark.cc: DebugMode's tensor hashes on a 64 MiB f32 tensor
// (BM_Hash/{norm,hash_tensor,bitwise}/16777216) against BM_MemRead, the
// fastest plain read-and-sum of the same buffer, so each hash's throughput
// reads as a fraction of memory bandwidth. Goal: norm and bitwise >= 70%.
#include <benchmark/benchmark.h>
#include <map>

#include "harness/tensor_hash.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace {

// hash_input: one randn tensor per size, shared by every benchmark here.
const Tensor& hash_input(int64_t n) {
  static std::map<int64_t, Tensor> cache;
  auto [it, fresh] = cache.try_emplace(n);
  if (fresh) it->second = ops::randn({n});
  return it->second;
}

void BM_Hash(benchmark::State& state, HashKind kind) {
  const Tensor& t = hash_input(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(compute_hash(t, kind));
  state.SetBytesProcessed(state.iterations() * t.numel() * 4);
}
BENCHMARK_CAPTURE(BM_Hash, norm, HashKind::kNorm)->Name("BM_Hash/norm")->Arg(16777216)->UseRealTime();
BENCHMARK_CAPTURE(BM_Hash, hash_tensor, HashKind::kHashTensor)->Name("BM_Hash/hash_tensor")->Arg(16777216)->UseRealTime();
BENCHMARK_CAPTURE(BM_Hash, bitwise, HashKind::kBitwise)->Name("BM_Hash/bitwise")->Arg(16777216)->UseRealTime();

// BM_MemRead: the bandwidth baseline. Each OpenMP thread sums its half of the
// buffer as 32-bit integers in 16 independent lanes (integer adds are exact
// and associative, so the loop vectorizes fully and stays bound by memory).
void BM_MemRead(benchmark::State& state) {
  const Tensor& t = hash_input(state.range(0));
  const auto* p = static_cast<const uint32_t*>(t.raw_data());
  const int64_t n = t.numel();
  constexpr int kLanes = 16;
  for (auto _ : state) {
    uint32_t total = 0;
#pragma omp parallel reduction(+ : total)
    {
      uint32_t acc[kLanes] = {};
#pragma omp for schedule(static)
      for (int64_t i = 0; i < n / kLanes; ++i) {
#pragma GCC unroll 16
        for (int j = 0; j < kLanes; ++j) acc[j] += p[i * kLanes + j];
      }
      for (int j = 0; j < kLanes; ++j) total += acc[j];
    }
    for (int64_t i = n / kLanes * kLanes; i < n; ++i) total += p[i];
    benchmark::DoNotOptimize(total);
  }
  state.SetBytesProcessed(state.iterations() * n * 4);
}
BENCHMARK(BM_MemRead)->Arg(16777216)->UseRealTime();

}  // namespace
}  // namespace opspec
