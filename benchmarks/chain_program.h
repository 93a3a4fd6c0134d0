// chain_program.h: issue 7's ten-op elementwise chain and the ten-op cheap
// chain as the benchmarks run them (on any device), and the bytes they move, shared by the CPU and CUDA
// chain benchmarks so their figures compare.
#pragma once

#include <benchmark/benchmark.h>

#include <vector>

#include "harness/program/fixture.h"
#include "runtime/core/tensor.h"

namespace opspec {

// fixture_program: the program of the fixture called name, made once.
inline FixtureFn fixture_program(const char* name) {
  const Fixture* f = find_fixture(name);
  OPSPEC_CHECK(f != nullptr, "the ", name, " fixture is not linked in");
  return f->make();
}

// elementwise_chain: the `elementwise_chain` fixture's program
// (fixtures/elementwise.cc), so specs and benchmarks run one program.
inline std::vector<Tensor> elementwise_chain(const std::vector<Tensor>& in) {
  static const FixtureFn chain = fixture_program("elementwise_chain");
  return chain(in);
}

// cheap_chain: the `cheap_chain` fixture's program: ten cheap ops, so the
// chain is bound by memory (eager: ten passes; fused: one).
inline std::vector<Tensor> cheap_chain(const std::vector<Tensor>& in) {
  static const FixtureFn chain = fixture_program("cheap_chain");
  return chain(in);
}

// set_chain_bytes: one read of the n-element f32 input plus one write of the result per iteration.
inline void set_chain_bytes(benchmark::State& state, int64_t n) {
  state.SetBytesProcessed(state.iterations() * 2 * n * static_cast<int64_t>(sizeof(float)));
}

}  // namespace opspec
