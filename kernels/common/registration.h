// registration.h: the entry points that register each kernel family with the
// dispatcher. Called once, in this order, by register_builtin_kernels, the
// kernels' composition root (kernels/register_kernels.cc). See Note [Builtin
// registration] in runtime/ops/register_builtins.cc.
#pragma once

#include "runtime/dispatch/dispatcher.h"

namespace opspec {
class Library;
}  // namespace opspec

namespace opspec::internal {

// Elementwise unary/binary/ternary ops, in-place variants, copies and
// conversions (clone, _to_copy, copy_): CPU kernels (their Meta kernels are
// kernels/meta/elementwise_meta.h).
void register_elementwise_kernels(Dispatcher& d);
// Reductions, softmax, layer norm and matrix products: CPU and Meta kernels.
void register_reduction_kernels(Dispatcher& d);
void register_linalg_kernels(Dispatcher& d);
// Autograd's non-elementwise backward ops (softmax, layer norm, dropout,
// slice/select backward): CPU and Meta kernels.
void register_backward_kernels(Dispatcher& d);
// The model ops: indexing, embeddings, tril/triu, argmax/argmin, nll_loss,
// CPU flash attention (and their backward ops): CPU and Meta kernels.
void register_nn_kernels(Dispatcher& d);
// Factories, random ops, fills, dropout, cat/stack, _local_scalar_dense: CPU and Meta kernels.
void register_factory_kernels(Dispatcher& d);
// View ops: one device-independent kernel registered at CPU and Meta.
void register_view_kernels(Dispatcher& d);
// randint, uniform_, normal_, bernoulli, bernoulli.p: CPU and Meta kernels (kernels/cpu/random.cc).
void register_random_kernels(Dispatcher& d);
// split.Tensor, split_with_sizes, unbind.int at CPU and Meta, and chunk's
// decomposition (kernels/cpu/split.cc); register_split_kernels_at serves CUDA.
void register_split_kernels(Dispatcher& d);
void register_split_kernels_at(Library& lib, DispatchKey key);
// The kernels of the device backends this build has (CUDA when built), at
// their dispatch keys; defined in kernels/device_backends.cc (See Note [Device seam]).
void register_device_backends(Dispatcher& d);

}  // namespace opspec::internal
