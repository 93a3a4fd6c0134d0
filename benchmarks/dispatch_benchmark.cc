// dispatch_benchmark.cc: the cost of one dispatched op with no mode, a minimal
// recording mode, DebugMode, and DebugMode with norm hashes. Names are the
// ones issue 7's suite standardises (BM_Dispatch/add_1elem/...).
#include <benchmark/benchmark.h>

#include "absl/container/inlined_vector.h"
#include "harness/debug_mode.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace {

// RecordingMode: stores each op's name and its tensors' metadata (dtype and
// sizes), the least a useful recorder does, into a reused ring of records so
// the benchmark measures dispatch rather than the recorder's memory growth.
class RecordingMode : public DispatchMode {
 public:
  RecordingMode() : records_(kCapacity) {}
  bool dispatch(OpCall& call) override {
    Record& r = records_[next_++ % kCapacity];
    r.op = &call.op();
    r.tensors.clear();
    for (const Value& v : call.stack()) {
      if (!v.is_tensor()) continue;
      const IntArrayRef sizes = v.to_tensor().sizes();
      r.tensors.push_back({v.to_tensor().dtype(), SizeVec(sizes.begin(), sizes.end())});
    }
    call.proceed();
    return true;
  }

 private:
  static constexpr size_t kCapacity = 4096;
  struct TensorMeta {
    DType dtype;
    SizeVec sizes;
  };
  struct Record {
    const OperatorHandle* op = nullptr;
    absl::InlinedVector<TensorMeta, 3> tensors;
  };
  std::vector<Record> records_;
  size_t next_ = 0;
};

void BM_Dispatch_plain(benchmark::State& state) {
  const Tensor a = ops::ones({1}), b = ops::ones({1});
  for (auto _ : state) benchmark::DoNotOptimize(ops::add(a, b));
}
BENCHMARK(BM_Dispatch_plain)->Name("BM_Dispatch/add_1elem/plain");

void BM_Dispatch_recording_mode(benchmark::State& state) {
  const Tensor a = ops::ones({1}), b = ops::ones({1});
  RecordingMode mode;
  ModeGuard guard(mode);
  for (auto _ : state) benchmark::DoNotOptimize(ops::add(a, b));
}
BENCHMARK(BM_Dispatch_recording_mode)->Name("BM_Dispatch/add_1elem/recording_mode");

void run_debug_mode(benchmark::State& state, bool hashed) {
  const Tensor a = ops::ones({1}), b = ops::ones({1});
  DebugMode dm;
  auto scope = dm.enter();
  std::optional<DebugMode::HashScope> hashes;
  if (hashed) hashes.emplace(std::vector<HashKind>{HashKind::kNorm}, /*hash_inputs=*/true, /*as_tuple=*/false);
  int64_t n = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(ops::add(a, b));
    if (++n % 10000 == 0) dm.reset();  // a log of 10k ops, a large real program; bounds memory
  }
}
void BM_Dispatch_debug_mode(benchmark::State& state) { run_debug_mode(state, false); }
void BM_Dispatch_debug_mode_hashed(benchmark::State& state) { run_debug_mode(state, true); }
BENCHMARK(BM_Dispatch_debug_mode)->Name("BM_Dispatch/add_1elem/debug_mode");
BENCHMARK(BM_Dispatch_debug_mode_hashed)->Name("BM_Dispatch/add_1elem/debug_mode_hashed");

}  // namespace
}  // namespace opspec

