// recording.cc: recordings of a capture, and the comparisons and checks
// behind replaying them. See Note [Replaying a capture] in replay.cc.
#include "runtime/compile/internal/recording.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

#include "runtime/dispatch/mode.h"
#include "runtime/fake/fake_tensor.h"

namespace opspec::internal {

namespace {

// same_bytes: whether the n bytes at a and b are equal; the sizes of numbers
// are compared inline (a library call per wrapped number showed in profiles).
bool same_bytes(const void* a, const void* b, size_t n) {
  auto same = [&]<class T>(T) {
    T x, y;
    std::memcpy(&x, a, sizeof(T));
    std::memcpy(&y, b, sizeof(T));
    return x == y;
  };
  switch (n) {
    case 1: return same(uint8_t{});
    case 2: return same(uint16_t{});
    case 4: return same(uint32_t{});
    case 8: return same(uint64_t{});
    default: return std::memcmp(a, b, n) == 0;
  }
}

// host_number: t is a wrapped number in host memory, compared by value when replaying.
bool host_number(const Tensor& t) { return t.is_wrapped_number() && t.impl()->storage()->device().is_cpu(); }

// same_number: host number t has this dtype and element bytes (bitwise, as
// doubles are compared; raw_data() skips the data-access hook, so matching
// never breaks the graph).
bool same_number(const Tensor& t, DType dtype, const void* bytes) {
  return t.dtype() == dtype && same_bytes(t.raw_data(), bytes, static_cast<size_t>(t.element_size()));
}

// keep_bits: fills arg's copy of v's bits when v is a number (same_as_recorded reads it).
void keep_bits(const Value& v, Recording::StepArg& arg) {
  using Bits = Recording::StepArg::Bits;
  if (v.is_int()) {
    arg.bits_kind = Bits::kInt;
    arg.bits = std::bit_cast<uint64_t>(v.to_int());
  } else if (v.is_double()) {
    arg.bits_kind = Bits::kDouble;
    arg.bits = std::bit_cast<uint64_t>(v.to_double());
  } else if (v.is_bool()) {
    arg.bits_kind = Bits::kBool;
    arg.bits = v.to_bool() ? 1 : 0;
  } else if (v.is_tensor() && v.to_tensor().defined() && host_number(v.to_tensor()) &&
             v.to_tensor().element_size() <= 8) {
    const Tensor& t = v.to_tensor();
    arg.bits_kind = Bits::kWrappedNumber;
    arg.wrapped_dtype = t.dtype();
    std::memcpy(&arg.bits, t.raw_data(), static_cast<size_t>(t.element_size()));
  }
}

}  // namespace

bool same_as_recorded(const Recording::StepArg& a, const Value& v) {
  using Bits = Recording::StepArg::Bits;
  switch (a.bits_kind) {
    case Bits::kInt: return v.is_int() && std::bit_cast<uint64_t>(v.to_int()) == a.bits;
    case Bits::kDouble: return v.is_double() && std::bit_cast<uint64_t>(v.to_double()) == a.bits;
    case Bits::kBool: return v.is_bool() && (v.to_bool() ? 1u : 0u) == a.bits;
    case Bits::kWrappedNumber: {
      // As same_value compares two host numbers.
      if (!v.is_tensor() || !v.to_tensor().defined()) return false;
      return host_number(v.to_tensor()) && same_number(v.to_tensor(), a.wrapped_dtype, &a.bits);
    }
    case Bits::kNone: break;
  }
  return same_value(*a.value, v);
}

bool same_value(const Value& a, const Value& b) {
  if (a.is_tensor() && b.is_tensor()) {
    const Tensor& x = a.to_tensor();
    const Tensor& y = b.to_tensor();
    if (!x.defined() || !y.defined()) return x.defined() == y.defined();
    if (!host_number(x) || !host_number(y)) return x.is_same(y);
    return same_number(y, x.dtype(), x.raw_data());
  }
  if (a.is_double() && b.is_double()) {
    return std::bit_cast<uint64_t>(a.to_double()) == std::bit_cast<uint64_t>(b.to_double());
  }
  if (a.is_double_list() && b.is_double_list()) {
    const auto& x = a.to_double_list();
    const auto& y = b.to_double_list();
    return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(), [](double p, double q) {
             return std::bit_cast<uint64_t>(p) == std::bit_cast<uint64_t>(q);
           });
  }
  return a == b;
}

namespace {

// same_node: node i of a and of b are interchangeable (op, name, target,
// values, producers by position, metadata).
bool same_node(const Recording& a, const Recording& b, size_t i) {
  const Node& x = *a.nodes[i];
  const Node& y = *b.nodes[i];
  if (x.op() != y.op() || x.name() != y.name() || x.target() != y.target() || x.index() != y.index() ||
      x.meta() != y.meta() || x.args().size() != y.args().size()) {
    return false;
  }
  if (x.op() == NodeOp::kConstant && !x.constant().is_same(y.constant())) return false;
  for (size_t k = 0; k < x.args().size(); ++k) {
    const NodeArg& p = x.args()[k];
    const NodeArg& q = y.args()[k];
    if (p.is_value() != q.is_value() || p.is_node() != q.is_node()) return false;
    if (p.is_value()) {
      if (!same_value(p.as_value(), q.as_value())) return false;
      continue;
    }
    // Node lists compare entry by entry: a null entry (None of a Tensor?[]) only matches null.
    const std::vector<Node*> pn = p.is_node() ? std::vector<Node*>{p.as_node()} : p.as_node_list();
    const std::vector<Node*> qn = q.is_node() ? std::vector<Node*>{q.as_node()} : q.as_node_list();
    if (pn.size() != qn.size()) return false;
    for (size_t j = 0; j < pn.size(); ++j) {
      if ((pn[j] == nullptr) != (qn[j] == nullptr)) return false;
      if (pn[j] != nullptr && a.position.at(pn[j]) != b.position.at(qn[j])) return false;
    }
  }
  return true;
}

}  // namespace

bool same_prefix(const Recording& a, const Recording& b, size_t n) {
  if (a.nodes.size() < n || b.nodes.size() < n) return false;
  for (size_t i = 0; i < n; ++i) {
    if (!same_node(a, b, i)) return false;
  }
  return true;
}

bool observed(const Stack& stack, size_t own_pre_dispatch_modes) {
  if (modes_observe(own_pre_dispatch_modes)) return true;
  for (const Value& v : stack) {
    if (v.is_tensor() && v.to_tensor().defined() && v.to_tensor().impl()->subclass()) return true;
    if (v.is_tensor_list()) {
      for (const Tensor& t : v.to_tensor_list()) {
        if (t.defined() && t.impl()->subclass()) return true;
      }
    }
  }
  return false;
}

namespace {

// functional: op neither writes nor aliases an argument (no alias annotation).
bool functional(const OperatorHandle& op) {
  const FunctionSchema& schema = op.schema();
  for (const Argument& a : schema.arguments()) {
    if (!a.alias_set.empty() || a.is_write) return false;
  }
  for (const Argument& r : schema.returns()) {
    if (!r.alias_set.empty() || r.is_write) return false;
  }
  return true;
}

}  // namespace

Recording record_copy(const Graph& graph, const std::vector<Node*>& outputs) {
  Recording r;
  r.raw = graph.clone();
  r.nodes = r.raw.nodes();
  const std::vector<Node*> source = graph.nodes();
  absl::flat_hash_map<const Node*, uint32_t> source_position;
  source_position.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) source_position[source[i]] = static_cast<uint32_t>(i);
  r.position.reserve(r.nodes.size());
  for (size_t i = 0; i < r.nodes.size(); ++i) r.position[r.nodes[i]] = static_cast<uint32_t>(i);
  for (const Node* n : outputs) r.held.push_back(r.nodes[source_position.at(n)]);
  index_steps(r);
  return r;
}

Recording record_whole(Graph graph) {
  Recording r;
  r.raw = std::move(graph);
  r.nodes = r.raw.nodes();
  const Node* output = r.nodes.back();
  r.nodes.pop_back();
  r.position.reserve(r.nodes.size());
  for (size_t i = 0; i < r.nodes.size(); ++i) r.position[r.nodes[i]] = static_cast<uint32_t>(i);
  for (const NodeArg& a : output->args()) r.held.push_back(a.as_node());
  for (const Node* p : r.raw.placeholders()) r.inputs.push_back(p);
  index_steps(r);
  return r;
}

bool results_match(const Node& n, const Stack& results) {
  if (results.size() != n.meta().size()) return false;
  for (size_t i = 0; i < results.size(); ++i) {
    const Value& r = results[i];
    const bool tensor = r.is_tensor() && r.to_tensor().defined();
    if (tensor != n.meta()[i].has_value()) return false;
    if (tensor && !(TensorMeta::of(r.to_tensor()) == *n.meta()[i])) return false;
  }
  return true;
}

void index_steps(Recording& r) {
  r.steps.assign(r.nodes.size(), Recording::Step());
  r.step_args.clear();
  r.step_fakes.clear();
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    const Node& n = *r.nodes[i];
    if (n.op() != NodeOp::kCall) continue;
    Recording::Step& step = r.steps[i];
    step.op = n.target();
    step.args_begin = static_cast<uint32_t>(r.step_args.size());
    for (const NodeArg& a : n.args()) {
      Recording::StepArg arg;
      if (a.is_node()) {
        arg.kind = Recording::StepArg::Kind::kNode;
        arg.node = a.as_node();
      } else if (a.is_value()) {
        const Value& v = a.as_value();
        arg.kind = v.is_none() ? Recording::StepArg::Kind::kNone : Recording::StepArg::Kind::kValue;
        arg.value = &v;
        keep_bits(v, arg);
      }
      r.step_args.push_back(arg);
    }
    step.args_end = static_cast<uint32_t>(r.step_args.size());
    // The results' nodes: the call itself, or one getitem per tensor result
    // (as record_call adds them); replay diverges on anything else.
    size_t end = i + 1;
    if (n.meta().size() != 1) {
      for (size_t k = 0; k < n.meta().size(); ++k) {
        if (!n.meta()[k].has_value()) continue;
        if (end < r.nodes.size() && r.nodes[end]->op() == NodeOp::kGetItem && r.nodes[end]->args()[0].as_node() == &n &&
            r.nodes[end]->index() == static_cast<int64_t>(k)) {
          ++end;
        } else {
          end = 0;
          break;
        }
      }
    }
    // A Tensor[] result's getitems follow even a list of one: replay leaves
    // such steps to capture (See Note [List results in graphs] in proxy_tensor.cc).
    const std::vector<Argument>& returns = n.target()->schema().returns();
    if (returns.size() == 1 && returns[0].type.is_list) end = 0;
    step.end = static_cast<uint32_t>(end);
    // An op with no result (_set_grad_enabled) runs for its effect: never answered without running.
    step.fresh_fakes = end != 0 && functional(*n.target()) && !n.meta().empty() &&
                       std::all_of(n.meta().begin(), n.meta().end(), [](const OutputMeta& m) { return m.has_value(); });
    step.fakes_begin = static_cast<uint32_t>(r.step_fakes.size());
    if (step.fresh_fakes) {
      for (const OutputMeta& m : n.meta()) {
        r.step_fakes.push_back(internal::make_fake(m->sizes, m->strides, 0, m->dtype, m->device));
      }
    }
    step.fakes_end = static_cast<uint32_t>(r.step_fakes.size());
  }
}

}  // namespace opspec::internal
