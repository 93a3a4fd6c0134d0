// passes.h: graph-to-graph passes. Each pass is a small rule applied node by
// node; it returns how much it changed so callers can iterate to a fixpoint.
#pragma once

#include "runtime/graph/graph.h"

namespace opspec {

// is_impure: a call that must stay even when nothing uses its result: it
// writes an argument (schema has a `(a!)` argument), consumes random numbers
// (tagged nondeterministic_seeded) or returns nothing (it sets global state:
// _set_grad_enabled), so removing it would change later results.
bool is_impure(const Node& node);

// sets_grad_mode: a call of torch._C::_set_grad_enabled (See Note [Grad mode nodes]).
bool sets_grad_mode(const Node& node);

// eliminate_dead_code: removes call, getitem and constant nodes whose values are
// never used and that are not impure, repeatedly; returns how many were removed.
int eliminate_dead_code(Graph& g);

}  // namespace opspec
