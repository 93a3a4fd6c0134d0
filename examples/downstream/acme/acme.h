// acme.h: what the acme project adds to opspec: an op (acme::scaled_add) with
// CPU and Meta kernels and a decomposition, and two compiler backends.
// Fixtures live in fixtures.cc (registered at start-up by OPSPEC_FIXTURE).
#pragma once

#include <source_location>

#include "runtime/compile/backend.h"
#include "runtime/core/tensor.h"
#include "runtime/trace/decomposition_table.h"

namespace acme {

// kScaledAddSchema: the op's schema, as PyTorch's TORCH_LIBRARY would write it.
inline constexpr const char* kScaledAddSchema = "scaled_add(Tensor self, Tensor other, float alpha) -> Tensor";

// register_all: declares acme::scaled_add and its kernels and registers the
// backends "acme_eager" and "acme_decomposed". Idempotent and thread-safe;
// call it at the start of main, before anything looks the op up (the spec
// loader resolves op names while parsing programs).
void register_all();

// scaled_add: self + alpha * other (same sizes, f32 or f64), dispatched as
// acme::scaled_add so modes, DebugMode and the compiler see it like any op.
opspec::Tensor scaled_add(const opspec::Tensor& self, const opspec::Tensor& other, double alpha,
                          const std::source_location& loc = std::source_location::current());

// decompositions: acme::scaled_add -> aten::add.Tensor(self, other, alpha=alpha),
// for make_fx and decomposing backends. Bitwise equal to the CPU kernel.
const opspec::DecompositionTable& decompositions();

// acme_eager_graphs: how many graphs the "acme_eager" backend has compiled
// since start-up (or the last reset_acme_eager_graphs()).
int acme_eager_graphs();
void reset_acme_eager_graphs();

// acme_eager_backend: the "acme_eager" backend: counts each graph it is given
// and runs it with opspec's graph interpreter.
opspec::CompiledGraph acme_eager_backend(const opspec::Graph& graph, const std::vector<opspec::Tensor>& example_inputs);

}  // namespace acme
