// nn_launch.h: the launchers of kernels/cuda/nn.cu (indexing, embeddings,
// tril/triu, argmax/argmin, nll_loss, CPU-style flash attention) over raw
// device pointers, shared by nn.cc (host side) and nn.cu, in plain C++ types
// as launch.h's (See Note [Elementwise launches] in launch.h).
#pragma once

#include <cstdint>

#include "kernels/cuda/launch.h"

namespace opspec::internal::cuda {

// launch_check_indices: sets *bad to 1 when one of the `count` indices of
// contiguous idx (i64 or i32 `idx_code`) lies outside [0, n), skipping those
// equal to `ignore` when has_ignore; the caller zeroes *bad first (See Note
// [Index checks on CUDA] in nn.cc).
void launch_check_indices(Code idx_code, const void* idx, int64_t count, int64_t n, bool has_ignore, int64_t ignore,
                          int* bad);

// launch_gather_rows: out[o, j, :] = src[o, idx[j], :] for a contiguous src of
// [outer, n, inner] elements of elem_size bytes (1, 2, 4 or 8), k indices
// (checked, i64 or i32) and a contiguous out of [outer, k, inner].
void launch_gather_rows(int elem_size, Code idx_code, const void* src, const void* idx, void* out, int64_t outer,
                        int64_t n, int64_t k, int64_t inner);

// launch_triangle: tril (lower) or triu of `mats` contiguous rows x cols
// matrices of elem_size-byte elements; the rest is zero bits.
void launch_triangle(int elem_size, bool lower, const void* src, void* out, int64_t mats, int64_t rows, int64_t cols,
                     int64_t diagonal);

// launch_arg_reduce: out[a * inner + c] = the index of the max (or min) of
// src[a, :, c] over a contiguous [outer, n > 0, inner] src of `code` (not b8):
// the first one on ties, the first NaN before anything else.
void launch_arg_reduce(Code code, bool max, const void* src, int64_t* out, int64_t outer, int64_t n, int64_t inner);

// launch_bitwise_not: out[i] = ~src[i] over n contiguous elements of `code`
// (i64, i32; b8 as logical not).
void launch_bitwise_not(Code code, const void* src, void* out, int64_t n);

// launch_zero_masked_rows: y[a, :, c] = 0 for every row x[a, :, c] of a
// contiguous [outer, len > 0, inner] x (of floating `code`, as y) whose
// values are all -inf (_safe_softmax's rows that attend to nothing).
void launch_zero_masked_rows(Code code, const void* x, void* y, int64_t outer, int64_t len, int64_t inner);

// launch_embedding_backward: row k of the contiguous [num_weights, width] out
// is the sum, in order, of the grad rows rows[offsets[k] .. offsets[k + 1]),
// each scaled by 1 / their count when scale_by_freq, in the compute type.
void launch_embedding_backward(Code code, const void* grad, const int64_t* offsets, const int64_t* rows, void* out,
                               int64_t num_weights, int64_t width, bool scale_by_freq);

// NllLossArgs: nll_loss over a contiguous [batch, n_classes, map] x of a
// floating code (map = 1, or nll_loss2d's H x W; See NllLossGeometry in
// kernels/common/nn_meta.h), checked i64 targets (one per item) and an
// optional weight of n_classes values.
struct NllLossArgs {
  const void* x = nullptr;
  const int64_t* target = nullptr;
  const void* weight = nullptr;  // null: every class weighs 1
  int64_t batch = 1, n_classes = 0, map = 1, ignore_index = -100;
  bool elementwise = false;  // reduction none with a batch dim: one loss per item
  bool mean = false;         // reduction mean
  int64_t level_power = 4;   // See Note [Cascade sum of nll_loss] in kernels/cpu/loss.cc
  void* out = nullptr;       // [batch * map] (elementwise) or one element, x's code
  void* total = nullptr;     // one element, x's code
  // Backward only: grad (x's code, [batch] or one element), total_weight as
  // one double, and grad_input (x's shape, zeroed by the caller).
  const void* grad = nullptr;
  const double* total_weight = nullptr;
};

// launch_nll_loss: out and total as kernels/cpu/loss.cc computes them.
void launch_nll_loss(Code code, const NllLossArgs& a);
// launch_nll_loss_backward: out[b, target[i], e] = -weight * grad for every
// item i = b * map + e whose target is not ignore_index.
void launch_nll_loss_backward(Code code, const NllLossArgs& a);

// SdpaArgs: _scaled_dot_product_flash_attention_for_cpu and its backward:
// q (B, H, L, E), k (B, H, S, E), v (B, H, S, Ev) contiguous of a floating
// code; the compute type is f64 for f64, f32 otherwise, and the optional
// mask holds compute values broadcast to (B, H, L, S) by mask_strides (0
// where broadcast). See Note [CUDA attention] in nn.cu.
struct SdpaArgs {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* mask = nullptr;
  int64_t mask_strides[4] = {};
  int64_t batch = 0, heads = 0, q_len = 0, kv_len = 0, head_dim = 0, v_head_dim = 0;
  double scale = 1;
  bool causal = false;
  // Forward: out (B, H, L, Ev) of the code with strides out_strides; lse,
  // the (B, L, H) buffer of the compute type.
  void* out = nullptr;
  int64_t out_strides[4] = {};
  void* lse = nullptr;
  // Backward: dout and o contiguous (B, H, L, Ev) and lse_in contiguous
  // (B, H, L), all of the compute type; dq, dk, dv of the code, shaped as q,
  // k, v with the given strides; delta, B * H * L compute values of scratch.
  const void* dout = nullptr;
  const void* o = nullptr;
  const void* lse_in = nullptr;
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  int64_t dq_strides[4] = {}, dk_strides[4] = {}, dv_strides[4] = {};
  void* delta = nullptr;
  void* scratch = nullptr;  // sdpa_scratch_bytes bytes of device memory (null when 0)
};

// sdpa_scratch_bytes: device memory the forward (or backward) launch needs
// for rows of scores too long for shared memory; 0 when none.
int64_t sdpa_scratch_bytes(Code code, const SdpaArgs& a, bool backward);
// launch_sdpa_forward / launch_sdpa_backward: see SdpaArgs.
void launch_sdpa_forward(Code code, const SdpaArgs& a);
void launch_sdpa_backward(Code code, const SdpaArgs& a);

}  // namespace opspec::internal::cuda
