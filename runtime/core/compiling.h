// compiling.h: whether the calling code is being captured by compile(),
// answerable below the compile layer. See Note [Is compiling].
#pragma once

namespace opspec::internal {

// Note [Is compiling]
// Code under runtime/compile branches on whether it is being captured, as
// torch/optim's _get_value branches on torch.compiler.is_compiling() (the
// optimizers of runtime/optim, See Note [Optimizer steps]). compile sits
// above them, so it installs its answer here when its first capture session
// starts and they ask is_compiling_now(); opspec::is_compiling()
// (runtime/compile/controls.h) stays the public API and gives the same answer.

// CompilingQuery: compile's answer for the calling thread.
using CompilingQuery = bool (*)();

// set_compiling_query: installs compile's query (compile calls it; a later call replaces it).
void set_compiling_query(CompilingQuery query);

// is_compiling_now: whether the calling thread is being captured by compile();
// false until compile installs its query.
bool is_compiling_now();

}  // namespace opspec::internal
