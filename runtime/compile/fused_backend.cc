// fused_backend.cc: the "fused" backend: partitions the graph (See Note
// [Fusion]), schedules fused groups and the remaining nodes, and runs the
// schedule, launching each group as one fused kernel (See Note [Fused kernels]).
#include <algorithm>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <queue>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/str_join.h"
#include "runtime/compile/backend.h"
#include "runtime/compile/fusion.h"
#include "runtime/compile/logging.h"
#include "runtime/core/device_hooks.h"
#include "runtime/core/grad_mode.h"
#include "runtime/core/memory_format.h"
#include "runtime/fused/cross_entropy_rows.h"
#include "runtime/fused/matmul_epilogue.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/dispatch/kernel_record.h"
#include "runtime/graph/interpreter.h"
#include "runtime/graph/passes.h"
#include "runtime/ops/elementwise_rules.h"
#include "runtime/ops/op_table.h"
#include "runtime/ops/untraced.h"

namespace opspec {
namespace {

// Step: one entry of the schedule: a node run as the interpreter runs it, or
// a fused group; then the values whose last use it was are released.
struct Step {
  const Node* node = nullptr;  // null for a group
  int group = -1;
  std::vector<size_t> release;  // value slots (node positions)
};

// RowsLoss: a cross_entropy_loss the device computes over the rows where
// they lie (See Note [Cross-entropy over rows]).
struct RowsLoss {
  const Node* rows = nullptr;     // whose value holds the rows: the reshape's input, or the loss's
  const Node* reshape = nullptr;  // the reshape to [N, C] it reads through (which then does not run), or null
  std::string name;               // its kernel's name, for kernel records
};

// Plan: what a CompiledGraph keeps: its own copy of the graph (the caller's
// may die), the groups and the schedule.
struct Plan {
  std::shared_ptr<const Graph> graph;
  std::vector<Node*> placeholders;
  absl::flat_hash_map<const Node*, size_t> input_index;  // placeholder -> input
  const Node* output = nullptr;
  absl::flat_hash_map<const Node*, size_t> pos;
  size_t num_nodes = 0;
  std::vector<FusionGroup> groups;
  std::vector<char> eager_layout;  // per group: in_eager_layout, decided once
  absl::flat_hash_map<const Node*, RowsLoss> losses;  // by cross_entropy_loss node
  absl::flat_hash_set<const Node*> absorbed;          // the reshapes losses read through
  std::vector<Step> steps;
  bool sets_grad_mode = false;  // has _set_grad_enabled nodes (See Note [Grad mode nodes])

  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;
};

// schedule: an order of the non-member nodes and the groups (a group at the
// place of its last member) that respects every dependency. Only a node that
// reads a group's output before the group's last member moves, to just after
// the group; barriers (See Note [Fusion]) never do.
std::vector<Step> schedule(const Plan& plan, const std::vector<Node*>& nodes) {
  // A group's linear runs in the group's step (See Note [Matmul epilogues]).
  absl::flat_hash_map<const Node*, int> group_of;
  for (size_t i = 0; i < plan.groups.size(); ++i) {
    for (const Node* m : plan.groups[i].nodes) group_of[m] = static_cast<int>(i);
    if (plan.groups[i].matmul != nullptr) group_of[plan.groups[i].matmul] = static_cast<int>(i);
  }
  // Units: one per group, then one per other node except the output.
  const size_t ngroups = plan.groups.size();
  std::vector<int64_t> unit_of(nodes.size(), -1);
  std::vector<int64_t> key(ngroups, 0);
  std::vector<const Node*> unit_node(ngroups, nullptr);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node* n = nodes[i];
    if (n == plan.output) continue;
    if (auto it = group_of.find(n); it != group_of.end()) {
      unit_of[i] = it->second;
      key[it->second] = static_cast<int64_t>(i);  // members are in order: ends at the last
    } else {
      unit_of[i] = static_cast<int64_t>(key.size());
      key.push_back(static_cast<int64_t>(i));
      unit_node.push_back(n);
    }
  }
  const size_t nunits = key.size();
  std::vector<absl::flat_hash_set<int64_t>> users(nunits);
  std::vector<int> indegree(nunits, 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (unit_of[i] < 0) continue;
    for (const Node* in : nodes[i]->input_nodes()) {
      const int64_t from = unit_of[plan.pos.at(in)];
      if (from != unit_of[i] && users[from].insert(unit_of[i]).second) ++indegree[unit_of[i]];
    }
  }
  using Entry = std::pair<int64_t, int64_t>;  // (key, unit)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  for (size_t u = 0; u < nunits; ++u) {
    if (indegree[u] == 0) ready.emplace(key[u], u);
  }
  std::vector<Step> steps;
  while (!ready.empty()) {
    const int64_t u = ready.top().second;
    ready.pop();
    steps.push_back(u < static_cast<int64_t>(ngroups) ? Step{nullptr, static_cast<int>(u), {}}
                                                      : Step{unit_node[u], -1, {}});
    for (int64_t v : users[u]) {
      if (--indegree[v] == 0) ready.emplace(key[v], v);
    }
  }
  OPSPEC_INTERNAL_ASSERT(steps.size() == nunits);  // groups are convex, so the units form a DAG

  // Release each value after the step of its last reader (the output node
  // reads last of all, so results are never released).
  std::vector<int64_t> last(nodes.size(), -1);
  for (size_t s = 0; s < steps.size(); ++s) {
    std::vector<const Node*> produced;
    if (steps[s].node != nullptr) {
      produced.push_back(steps[s].node);
    } else {
      const FusionGroup& group = plan.groups[steps[s].group];
      produced.assign(group.nodes.begin(), group.nodes.end());
      if (group.matmul != nullptr) produced.push_back(group.matmul);
    }
    for (const Node* n : produced) {
      last[plan.pos.at(n)] = static_cast<int64_t>(s);  // unused values die right away
      if (auto loss = plan.losses.find(n); loss != plan.losses.end()) {  // it reads the rows itself
        const size_t p = plan.pos.at(loss->second.rows);
        last[p] = std::max(last[p], static_cast<int64_t>(s));
      }
      for (const Node* in : n->input_nodes()) {
        const size_t p = plan.pos.at(in);
        if (group_of.contains(in) && group_of.contains(n) && group_of.at(in) == group_of.at(n)) continue;
        last[p] = std::max(last[p], static_cast<int64_t>(s));
      }
    }
  }
  for (const Node* in : plan.output->input_nodes()) last[plan.pos.at(in)] = -1;
  for (size_t p = 0; p < nodes.size(); ++p) {
    // Members that are not group outputs never get a value.
    if (last[p] >= 0) steps[static_cast<size_t>(last[p])].release.push_back(p);
  }
  return steps;
}

// zero_outputs: fills fresh outputs with zeros (device tensors through the
// device seam's copies).
void zero_outputs(const std::vector<Tensor>& outs, Device device) {
  for (const Tensor& t : outs) {
    if (t.nbytes() == 0) continue;  // an empty tensor has no buffer: memset(nullptr, 0, 0) is UB
    if (device.is_cpu()) {
      std::memset(t.raw_data(), 0, static_cast<size_t>(t.nbytes()));
    } else {  // ---- device groups (See Note [Fused CUDA kernels]) ----
      const std::vector<char> zeros(static_cast<size_t>(t.nbytes()), 0);
      get_device_hooks(device.type).copy_bytes(t.raw_data(), device, zeros.data(), kCPU, zeros.size());
    }
  }
}

// in_eager_layout: whether a cpu group's kernel writes its results in eager's
// layout itself (See Note [Fused outputs in eager's layout] in
// kernels/cpu/fused.cc): they are dense, all in one order, and the group
// writes over none of its inputs.
bool in_eager_layout(const FusionGroup& group, Device device) {
  if (!device.is_cpu() || group.outputs.empty() || group.inplace_input >= 0 || !group.inplace_chain.empty()) {
    return false;
  }
  const TensorMeta& first = group.outputs.front()->tensor_meta();
  return std::all_of(group.outputs.begin(), group.outputs.end(), [&](const Node* n) {
    const TensorMeta& m = n->tensor_meta();
    return m.strides == first.strides && is_non_overlapping_and_dense(m.sizes, m.strides);
  });
}

// lay_out_as_eager: results keep eager's layout: a result the kernel wrote
// row-major that eager lays out otherwise is copied into that layout (cpu
// only: See is_fusable).
void lay_out_as_eager(const FusionGroup& group, std::vector<Tensor>& outs) {
  for (size_t k = 0; k < group.outputs.size(); ++k) {
    const TensorMeta& m = group.outputs[k]->tensor_meta();
    if (is_contiguous_strides(m.sizes, m.strides) || outs[k].strides() == IntArrayRef(m.strides)) continue;
    Tensor laid_out = internal::make_strided(m.sizes, m.strides, m.dtype, m.device);
    copy_untraced(laid_out, outs[k]);
    outs[k] = std::move(laid_out);
  }
}

// run_group: allocates the group's outputs and launches its fused kernel,
// reported to kernel observers (DebugMode) with pre/post hashes. A group on
// a device runs through the device's hooks and is reported with the device
// as its prefix: "[cuda] fused_relu_mul_add_0(...)". eager_layout: the
// group's in_eager_layout, decided when the plan was made.
std::vector<Tensor> run_group(const FusionGroup& group, bool eager_layout, const std::vector<Tensor>& ins) {
  const Device device = group.nodes.front()->tensor_meta().device;  // (a group may have no outputs)
  std::vector<Tensor> outs;
  for (const Node* n : group.outputs) {
    const TensorMeta& m = n->tensor_meta();
    outs.push_back(eager_layout ? internal::make_tensor_with_strides(m.sizes, m.strides, m.dtype, m.device)
                                : internal::make_tensor(m.sizes, m.dtype, m.device));
  }
  if (!group.inplace_chain.empty() && group.inplace_input < 0) {  // a chain over a value of the group
    const TensorMeta& m = group.inplace_root->tensor_meta();
    outs.push_back(internal::make_tensor(m.sizes, m.dtype, m.device));
  }
  internal::KernelRecordToken record;
  if (internal::kernel_observed()) {
    // Recorders hash the outputs before the launch too: zero them so the log
    // is deterministic (only while someone observes, so it costs nothing
    // otherwise). An in-place chain's root keeps its values: they are read.
    zero_outputs(outs, device);
    KernelArgs kwargs;
    for (size_t k = 0; k < ins.size(); ++k) kwargs.emplace_back(str_cat("in", k), ins[k]);
    for (size_t k = 0; k < outs.size(); ++k) kwargs.emplace_back(str_cat("out", k), outs[k]);
    if (group.inplace_input >= 0) kwargs.emplace_back(str_cat("out", outs.size()), ins[group.inplace_input]);
    kwargs.emplace_back("n", compute_numel(group.program->shape()));
    record = internal::record_kernel(device.is_cpu() ? "fused" : device_type_name(device.type), group.name, kwargs);
  }
  if (group.inplace_input >= 0) outs.push_back(ins[group.inplace_input]);  // See Note [In-place fusion]
  try {
    group.kernel->run(ins, outs);
  } catch (const Error& e) {
    throw Error(str_cat("fused_backend: kernel ", group.name, ": ", e.what()));
  }
  record.finish();
  lay_out_as_eager(group, outs);
  return outs;
}

// run_epilogue: the group's linear with the group as its epilogue (See Note
// [Matmul epilogues]): ins holds the group's inputs but the linear's result,
// and x, w and b (or null) are the linear's arguments. Empty, with nothing
// run, when the device computes that product no other way than eager's kernels.
std::vector<Tensor> run_epilogue(const FusionGroup& group, std::vector<Tensor> ins, const Tensor& x, const Tensor& w,
                                 const Tensor* b) {
  const TensorMeta& pm = group.matmul->tensor_meta();
  const internal::LinearBlocksFn linear_blocks = internal::linear_blocks(pm.device.type);
  if (linear_blocks == nullptr || x.dim() < 2 || w.dim() != 2 || compute_numel(pm.sizes) == 0) return {};
  const int64_t width = pm.sizes.back(), rows = compute_numel(pm.sizes) / width;
  Tensor product = internal::make_tensor(pm.sizes, pm.dtype, pm.device);
  const Tensor matrix = internal::make_view(product, {rows, width}, {width, 1}, 0);
  ins[static_cast<size_t>(group.matmul_input)] = product;
  std::vector<Tensor> outs;
  for (size_t k = 0; k < group.outputs.size(); ++k) {
    const TensorMeta& m = group.outputs[k]->tensor_meta();
    outs.push_back(static_cast<int>(k) == group.matmul_output ? product
                                                              : internal::make_tensor(m.sizes, m.dtype, m.device));
  }
  internal::KernelRecordToken record;
  auto start = [&] {
    if (!internal::kernel_observed()) return;
    // As run_group records, the linear's arguments first.
    zero_outputs(outs, pm.device);
    KernelArgs kwargs;
    size_t next = 0;
    for (const Tensor* t : {&x, &w, b}) {
      if (t != nullptr) kwargs.emplace_back(str_cat("in", next++), *t);
    }
    for (size_t k = 0; k < ins.size(); ++k) {
      if (static_cast<int>(k) != group.matmul_input) kwargs.emplace_back(str_cat("in", next++), ins[k]);
    }
    for (size_t k = 0; k < outs.size(); ++k) kwargs.emplace_back(str_cat("out", k), outs[k]);
    kwargs.emplace_back("n", compute_numel(group.program->shape()));
    record = internal::record_kernel("fused", group.name, kwargs);
  };
  // Blocks may finish on OpenMP threads, where no exception may escape.
  std::mutex mu;
  std::exception_ptr failure;
  const bool ran = linear_blocks(matrix, x, w, b, start, [&](const internal::MatrixBlock& block) {
    try {
      if (block.rows == rows && block.cols == width) {
        group.kernel->run(ins, outs);  // the product was not blocked: one run, on every thread
      } else {
        group.kernel->run_block(ins, outs, block, width);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      if (!failure) failure = std::current_exception();
    }
  });
  if (!ran) return {};
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const Error& e) {
      throw Error(str_cat("fused_backend: kernel ", group.name, ": ", e.what()));
    }
  }
  record.finish();
  lay_out_as_eager(group, outs);
  return outs;
}

// find_row_losses: the graph's cross_entropy_loss nodes the device may compute
// over rows where they lie (See Note [Cross-entropy over rows]): class-index
// targets, no weight, no label smoothing, mean or sum, on cpu f32 or f64
// [N, C] inputs, read through a reshape when that is their only use.
void find_row_losses(Plan& plan, const std::vector<Node*>& nodes) {
  auto cpu_float = [](const Node* n, size_t dims) -> const TensorMeta* {
    if (n->meta().size() != 1 || !n->meta()[0].has_value()) return nullptr;
    const TensorMeta& m = *n->meta()[0];
    const bool ok = m.device.is_cpu() && (m.dtype == DType::kFloat32 || m.dtype == DType::kFloat64) &&
                    (dims == 0 || m.sizes.size() == dims);
    return ok ? &m : nullptr;
  };
  for (const Node* n : nodes) {
    if (n->op() != NodeOp::kCall || n->target() != &builtin_op(OpId::cross_entropy_loss) || n->args().size() != 6) {
      continue;
    }
    const std::vector<NodeArg>& a = n->args();
    if (!a[0].is_node() || !a[1].is_node() || !a[2].is_value() || !a[2].as_value().is_none() || !a[3].is_value() ||
        !a[3].as_value().is_int() || !a[4].is_value() || !a[4].as_value().is_int() || !a[5].is_value() ||
        !a[5].as_value().is_scalar() || a[5].as_value().to_double() != 0.0) {
      continue;
    }
    const int64_t reduction = a[3].as_value().to_int();
    const TensorMeta* self = cpu_float(a[0].as_node(), 2);
    const Node* target = a[1].as_node();
    if (self == nullptr || (reduction != 1 && reduction != 2) || target->meta().size() != 1 ||
        !target->meta()[0].has_value() || target->meta()[0]->dtype != DType::kInt64 ||
        target->meta()[0]->sizes.size() != 1 || target->meta()[0]->sizes[0] != self->sizes[0] ||
        self->sizes[0] == 0 || self->sizes[1] == 0) {
      continue;
    }
    RowsLoss loss{a[0].as_node(), nullptr,
                  str_cat("fused_cross_entropy_loss_", plan.groups.size() + plan.losses.size())};
    const Node* r = a[0].as_node();
    if (r->op() == NodeOp::kCall && r->target() == &builtin_op(OpId::reshape) && r->users().size() == 1 &&
        r->args()[0].is_node()) {
      const Node* source = r->args()[0].as_node();
      const TensorMeta* m = cpu_float(source, 0);
      if (m != nullptr && m->dtype == self->dtype && (m->sizes.size() == 2 || m->sizes.size() == 3) &&
          m->sizes.back() == self->sizes[1] && (m->strides.back() == 1 || m->sizes.back() == 1) &&
          compute_numel(m->sizes) == compute_numel(self->sizes)) {
        loss.rows = source;
        loss.reshape = r;
      }
    }
    if (loss.reshape == nullptr && self->strides[1] != 1 && self->sizes[1] != 1) continue;
    if (loss.reshape != nullptr) plan.absorbed.insert(loss.reshape);
    plan.losses.emplace(n, std::move(loss));
  }
}

// run_row_loss: loss's cross_entropy over rows by the device's kernel, recorded
// as one kernel; an undefined tensor, with nothing run, when it declines.
Tensor run_row_loss(const RowsLoss& loss, const Node& n, const Tensor& rows, const Tensor& target) {
  const TensorMeta& m = n.tensor_meta();
  const internal::CrossEntropyRowsFn kernel = internal::cross_entropy_rows(m.device.type);
  if (kernel == nullptr) return Tensor();
  const Tensor out = internal::make_tensor({}, m.dtype, m.device);
  internal::KernelRecordToken record;
  auto start = [&] {
    if (!internal::kernel_observed()) return;
    zero_outputs({out}, m.device);
    record = internal::record_kernel("fused", loss.name, {{"in0", rows}, {"in1", target}, {"out0", out}});
  };
  const int64_t reduction = n.args()[3].as_value().to_int(), ignore_index = n.args()[4].as_value().to_int();
  if (!kernel(rows, target, reduction, ignore_index, out, start)) return Tensor();
  record.finish();
  return out;
}

// root_overlaps: the in-place chain's root shares memory with another of the
// group's inputs without being it (graph inputs that alias): then the group
// cannot write over it element for element. See Note [In-place fusion].
bool root_overlaps(const FusionGroup& group, const std::vector<Tensor>& ins) {
  const Tensor& root = ins[static_cast<size_t>(group.inplace_input)];
  const bool overlaps = std::any_of(ins.begin(), ins.end(), [&](const Tensor& t) {
    return t.numel() > 0 && root.numel() > 0 && t.is_alias_of(root) && !internal::same_elements(t, root);
  });
  return overlaps || !root.is_contiguous();
}

std::vector<Tensor> Plan::run(const std::vector<Tensor>& inputs) const {
  OPSPEC_CHECK(inputs.size() == placeholders.size(), "fused_backend: the graph takes ", placeholders.size(),
               " input(s) (", absl::StrJoin(placeholders, ", ", [](std::string* o, const Node* p) {
                 o->append("%" + p->name());
               }),
               ") but ", inputs.size(), " were given");
  for (size_t i = 0; i < inputs.size(); ++i) internal::check_graph_input(inputs[i], *placeholders[i], i, /*check_sizes=*/true, "fused_backend");
  std::optional<autograd::AutoGradMode> restore_grad_mode;  // the graph's changes end with it
  if (sets_grad_mode) restore_grad_mode.emplace(autograd::is_grad_enabled());
  std::vector<Stack> values(num_nodes);
  auto value_of = [&](const Node* producer, const Node& user) -> const Value& {
    const Stack& v = values[pos.at(producer)];
    OPSPEC_CHECK(v.size() == 1, "fused_backend: node %", user.name(), " uses %", producer->name(), ", which has ",
                 v.size(), " outputs; select one with a getitem node");
    return v[0];
  };
  for (const Step& step : steps) {
    if (step.node == nullptr) {
      const FusionGroup& group = groups[static_cast<size_t>(step.group)];
      if (group.matmul != nullptr) {
        const Node& l = *group.matmul;
        auto arg = [&](size_t i) { return value_of(l.args()[i].as_node(), l).to_tensor(); };
        std::vector<Tensor> ins;
        for (const Node* in : group.inputs) {
          ins.push_back(in == &l ? Tensor() : value_of(in, *group.nodes.front()).to_tensor());
        }
        const Tensor x = arg(0), w = arg(1), b = l.args()[2].is_node() ? arg(2) : Tensor();
        std::vector<Tensor> outs = run_epilogue(group, std::move(ins), x, w, b.defined() ? &b : nullptr);
        if (!outs.empty()) {
          for (size_t k = 0; k < group.outputs.size(); ++k) values[pos.at(group.outputs[k])] = {std::move(outs[k])};
          for (size_t dead : step.release) values[dead].clear();
          continue;
        }
        // Declined: the linear as eager runs it, then the group.
        values[pos.at(&l)] = internal::run_call_node(
            l, [&](const Node* p) -> const Value& { return value_of(p, l); }, "fused_backend");
      }
      std::vector<Tensor> ins;
      for (const Node* in : group.inputs) ins.push_back(value_of(in, *group.nodes.front()).to_tensor());
      if (group.inplace_input >= 0 && root_overlaps(group, ins)) {
        // The members one by one, as eager runs them (See Note [In-place fusion]).
        for (const Node* m : group.nodes) {
          values[pos.at(m)] = internal::run_call_node(
              *m, [&](const Node* p) -> const Value& { return value_of(p, *m); }, "fused_backend");
        }
      } else {
        std::vector<Tensor> outs = run_group(group, eager_layout[static_cast<size_t>(step.group)], ins);
        for (size_t k = 0; k < group.outputs.size(); ++k) values[pos.at(group.outputs[k])] = {std::move(outs[k])};
        if (!group.inplace_chain.empty()) {  // the root and every link are the chain's buffer
          values[pos.at(group.inplace_root)] = {outs.back()};
          for (const Node* link : group.inplace_chain) values[pos.at(link)] = {outs.back()};
        }
      }
    } else {
      const Node& n = *step.node;
      Stack& slot = values[pos.at(&n)];
      if (absorbed.contains(&n)) {  // read through by its loss, which runs it if its kernel declines
        for (size_t dead : step.release) values[dead].clear();
        continue;
      }
      if (auto loss = losses.find(&n); loss != losses.end()) {
        const RowsLoss& l = loss->second;
        Tensor out =
            run_row_loss(l, n, value_of(l.rows, n).to_tensor(), value_of(n.args()[1].as_node(), n).to_tensor());
        if (out.defined()) {
          slot = {std::move(out)};
          for (size_t dead : step.release) values[dead].clear();
          continue;
        }
        if (l.reshape != nullptr) {  // declined: the reshape, then the loss, as eager runs them
          values[pos.at(l.reshape)] = internal::run_call_node(
              *l.reshape, [&](const Node* p) -> const Value& { return value_of(p, *l.reshape); }, "fused_backend");
        }
      }
      switch (n.op()) {
        case NodeOp::kPlaceholder: slot = {inputs[input_index.at(&n)]}; break;
        case NodeOp::kConstant: {
          const Tensor& t = n.constant();
          OPSPEC_CHECK(!t.impl()->storage()->device().is_meta(), "fused_backend: constant %", n.name(), " (",
                       t.meta_str(), ") has no data; trace with real constants to run this graph");
          slot = {t};
          break;
        }
        case NodeOp::kGetItem: {
          const Stack& call = values[pos.at(n.args()[0].as_node())];
          OPSPEC_CHECK(n.index() < static_cast<int64_t>(call.size()), "fused_backend: node %", n.name(),
                       " selects output ", n.index(), " of %", n.args()[0].as_node()->name(), ", which has ",
                       call.size());
          slot = {call[static_cast<size_t>(n.index())]};
          break;
        }
        case NodeOp::kCall: slot = internal::run_call_node(n, [&](const Node* p) -> const Value& { return value_of(p, n); }, "fused_backend"); break;
        case NodeOp::kOutput: break;
      }
    }
    for (size_t dead : step.release) values[dead].clear();
  }
  std::vector<Tensor> results;
  for (const NodeArg& a : output->args()) {
    const Value& v = value_of(a.as_node(), *output);
    OPSPEC_CHECK(v.is_tensor(), "fused_backend: output %", a.as_node()->name(), " is a ", v.type_name(),
                 ", not a tensor");
    results.push_back(v.to_tensor());
  }
  return results;
}

void log_groups(const Plan& plan) {
  if (!log_enabled("fusion")) return;
  int64_t calls = 0, fused = 0;
  for (const Node* n : plan.graph->nodes()) calls += n->op() == NodeOp::kCall;
  for (const FusionGroup& g : plan.groups) {
    std::vector<Node*> members = g.nodes;
    if (g.matmul != nullptr) members.insert(members.begin(), g.matmul);  // See Note [Matmul epilogues]
    fused += static_cast<int64_t>(members.size());
    // A linear's result is no input of the kernel; its arguments are.
    const size_t inputs = g.matmul == nullptr ? g.inputs.size() : g.inputs.size() - 1 + g.matmul->input_nodes().size();
    log_message("fusion", str_cat(g.name, ": ", absl::StrJoin(members, ", ", [](std::string* o, const Node* n) {
                                    o->append(n->target()->name());
                                  }),
                                  " -> 1 kernel, ", inputs, inputs == 1 ? " input, " : " inputs, ",
                                  g.outputs.size(), g.outputs.size() == 1 ? " output" : " outputs",
                                  g.inplace_chain.empty() ? ""
                                  : g.inplace_input >= 0
                                      ? str_cat(", writes over %", g.inputs[g.inplace_input]->name())
                                      : str_cat(", and %", g.inplace_root->name(), " after its in-place ops")));
  }
  // Losses in graph order (See Note [Cross-entropy over rows]).
  std::vector<std::pair<const Node*, const RowsLoss*>> losses;
  for (const auto& [n, loss] : plan.losses) losses.emplace_back(n, &loss);
  std::sort(losses.begin(), losses.end(),
            [&](const auto& a, const auto& b) { return plan.pos.at(a.first) < plan.pos.at(b.first); });
  for (const auto& [n, loss] : losses) {
    fused += loss->reshape != nullptr ? 2 : 1;
    log_message("fusion", str_cat(loss->name, ": ", loss->reshape != nullptr ? "aten::reshape, " : "",
                                  n->target()->name(), " -> 1 kernel, 2 inputs, 1 output, reads %", loss->rows->name(),
                                  "'s rows where they lie"));
  }
  log_message("fusion", str_cat("fused_backend: ", plan.groups.size() + plan.losses.size(), " fused kernel(s) for ",
                                fused, " of ", calls, " call node(s); the rest run through their normal kernels"));
}

}  // namespace

CompiledGraph fused_backend(const Graph& graph, const std::vector<Tensor>& example_inputs) {
  auto plan = std::make_shared<Plan>();
  auto g = std::make_shared<Graph>(graph.clone());
  plan->graph = g;
  plan->placeholders = g->placeholders();
  for (size_t i = 0; i < plan->placeholders.size(); ++i) plan->input_index[plan->placeholders[i]] = i;
  OPSPEC_CHECK(example_inputs.size() == plan->placeholders.size(), "fused_backend: the graph takes ",
               plan->placeholders.size(), " input(s) but ", example_inputs.size(), " example input(s) were given");
  plan->output = g->output();
  OPSPEC_CHECK(plan->output != nullptr, "fused_backend: the graph has no output node");
  const std::vector<Node*> nodes = g->nodes();
  plan->num_nodes = nodes.size();
  for (size_t i = 0; i < nodes.size(); ++i) plan->pos[nodes[i]] = i;
  plan->groups = partition_graph(*g);
  for (const FusionGroup& group : plan->groups) {
    plan->eager_layout.push_back(in_eager_layout(group, group.nodes.front()->tensor_meta().device));
  }
  find_row_losses(*plan, nodes);
  plan->steps = schedule(*plan, nodes);
  plan->sets_grad_mode = std::any_of(nodes.begin(), nodes.end(), [](const Node* n) { return sets_grad_mode(*n); });
  log_groups(*plan);
  return [plan](const std::vector<Tensor>& inputs) { return plan->run(inputs); };
}

}  // namespace opspec
