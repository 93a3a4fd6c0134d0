// aot_eager.h: the aot_eager backend: the captured (torch-level) graph is
// traced again below the dispatcher's decompositions, optionally through a
// decomposition table, and the resulting graph of primitive aten ops is
// interpreted, so DebugMode shows the aten ops and a wrong decomposition
// shows up as a hash divergence.
#pragma once

#include "runtime/compile/backend.h"
#include "runtime/trace/decomposition_table.h"

namespace opspec {

// make_aot_eager_backend: aot_eager with decompositions applied while
// re-tracing (none: only the runtime's own composite decompositions). The
// table must outlive the backend. The registered "aot_eager" uses none.
Backend make_aot_eager_backend(const DecompositionTable* decompositions = nullptr);

}  // namespace opspec
