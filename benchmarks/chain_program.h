// chain_program.h: issue 7's ten-op elementwise chain as the benchmarks run
// it (on any device), and the bytes it moves, shared by the CPU and CUDA
// chain benchmarks so their figures compare.
#pragma once

#include <benchmark/benchmark.h>

#include <vector>

#include "harness/program/fixture.h"
#include "runtime/core/tensor.h"

namespace opspec {

// elementwise_chain: the `elementwise_chain` fixture's program
// (fixtures/elementwise.cc), so specs and benchmarks run one program.
inline std::vector<Tensor> elementwise_chain(const std::vector<Tensor>& in) {
  static const FixtureFn chain = [] {
    const Fixture* f = find_fixture("elementwise_chain");
    OPSPEC_CHECK(f != nullptr, "the elementwise_chain fixture is not linked in");
    return f->make();
  }();
  return chain(in);
}

// set_chain_bytes: one read of the n-element f32 input plus one write of the result per iteration.
inline void set_chain_bytes(benchmark::State& state, int64_t n) {
  state.SetBytesProcessed(state.iterations() * 2 * n * static_cast<int64_t>(sizeof(float)));
}

}  // namespace opspec
