// memory_benchmark.cc: the machine's memory bandwidth, the baselines every
// memory-bound benchmark is read against: BM_MemRead/16777216 (one read of
// 64 MiB: what a reduction or a hash can reach) and BM_Copy/16777216 (one
// read and one write of 64 MiB: what an elementwise op or a fused kernel can
// reach), and BM_CopyStream/16777216 (the same with streaming stores). All run
// on every OpenMP thread, as the kernels do.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <map>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "kernels/cpu/cache_hints.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace {

// buffer: one randn tensor per (size, index), kept across repetitions.
const Tensor& buffer(int64_t n, int index) {
  static std::map<std::pair<int64_t, int>, Tensor> cache;
  auto [it, fresh] = cache.try_emplace({n, index});
  if (fresh) it->second = ops::randn({n});
  return it->second;
}

// BM_MemRead: each OpenMP thread sums its half of the buffer as 32-bit
// integers in 16 independent lanes (integer adds are exact and associative,
// so the loop vectorizes fully and stays bound by memory).
void BM_MemRead(benchmark::State& state) {
  const Tensor& t = buffer(state.range(0), 0);
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

// copy_shares: times copy(dst, src, bytes) over each OpenMP thread's
// contiguous share of one 4n-byte buffer into another, both allocated once (no
// page faults in the loop). Bytes count the read and the write, as the
// elementwise benchmarks count theirs.
template <class Copy>
void copy_shares(benchmark::State& state, const Copy& copy) {
  const int64_t n = state.range(0);
  const auto* src = static_cast<const char*>(buffer(n, 0).raw_data());
  auto* dst = static_cast<char*>(buffer(n, 1).raw_data());
  const int64_t bytes = n * 4;
  for (auto _ : state) {
#pragma omp parallel
    {
#ifdef _OPENMP
      const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
#else
      const int64_t t = 0, nt = 1;
#endif
      const int64_t begin = bytes * t / nt / 64 * 64, end = t + 1 == nt ? bytes : bytes * (t + 1) / nt / 64 * 64;
      copy(dst + begin, src + begin, end - begin);
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2 * bytes);
}

// BM_Copy: glibc's memcpy of each thread's share.
void BM_Copy(benchmark::State& state) {
  copy_shares(state, [](char* d, const char* s, int64_t b) { std::memcpy(d, s, static_cast<size_t>(b)); });
}
BENCHMARK(BM_Copy)->Arg(16777216)->UseRealTime();

// BM_CopyStream: BM_Copy with streaming stores (internal::stream_copy, the
// kernels' own; See Note [Streaming stores]): the write needs no read of the
// line first, so this is the machine's real ceiling for one read and one
// write. The goals stay against BM_Copy (memcpy), as they were set.
void BM_CopyStream(benchmark::State& state) {
  copy_shares(state, [](char* d, const char* s, int64_t b) {
    internal::stream_copy(d, s, b);
    internal::stream_fence();
  });
}
BENCHMARK(BM_CopyStream)->Arg(16777216)->UseRealTime();

}  // namespace
}  // namespace opspec
