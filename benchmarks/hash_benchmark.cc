// hash_benchmark.cc: DebugMode's tensor hashes on a 64 MiB f32 tensor
// (BM_Hash/{norm,hash_tensor,bitwise}/16777216), read against BM_MemRead
// (memory_benchmark.cc), the fastest plain read-and-sum of a buffer of the
// same size, so each hash's throughput is a fraction of memory bandwidth.
// Goal: norm and bitwise >= 70%.
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

}  // namespace
}  // namespace opspec
