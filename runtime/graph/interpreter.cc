#include "runtime/graph/interpreter.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "runtime/core/error.h"
#include "runtime/core/grad_mode.h"
#include "runtime/dispatch/boxing.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/graph/passes.h"

namespace opspec {
namespace {

// kNoSlot: a list entry that is None (a Tensor?[] argument; See Note [Optional tensor lists]).
constexpr uint32_t kNoSlot = UINT32_MAX;

// constant_value: a constant's tensor, which must hold data (not meta, not fake).
const Tensor& constant_value(const Node& n) {
  const Tensor& t = n.constant();
  const bool no_data = t.impl()->storage()->device().is_meta();
  OPSPEC_CHECK(!no_data, "run_graph: constant %", n.name(), " is a ", t.device().is_meta() ? "meta" : "fake",
               " tensor (", t.meta_str(), ") and has no data; trace with real constants to run this graph");
  return t;
}

// dispatch_node: runs call node n on its argument stack through the full
// dispatcher, as eager code does, so active modes see the op; errors name the
// node. check: validate the stack against the op's schema first.
void dispatch_node(const Node& n, Stack& stack, std::string_view who, bool check = true) {
  try {
    if (check) n.target()->schema().check_stack(stack);
    Dispatcher::singleton().call_boxed(*n.target(), stack);
    // A Tensor[] result is one output per element (See Note [List results in graphs] in proxy_tensor.cc).
    if (stack.size() == 1 && stack[0].is_tensor_list()) {
      std::vector<Tensor> list = std::move(stack[0].to_tensor_list());
      stack.clear();
      for (Tensor& t : list) stack.emplace_back(std::move(t));
    }
  } catch (const NotImplementedError& e) {
    throw NotImplementedError(str_cat(who, ": node %", n.name(), " (", n.target()->name(), "): ", e.what()));
  } catch (const Error& e) {
    throw Error(str_cat(who, ": node %", n.name(), " (", n.target()->name(), "): ", e.what()));
  }
}

// Note [Typed graph steps]
// A boxed step copies every argument into a Stack and goes through the
// kernel's boxed wrapper; on small tensors that was a quarter of what a
// compiled graph added to its ops. A call whose op takes only tensors and
// scalars and returns one tensor (elementwise ops, mm) is instead called the
// way eager code calls it (Dispatcher::call with the op's C++ signature), its
// tensors read in place from their slots: modes and kernels see the same call
// (an op whose kernel has another signature is boxed by the dispatcher). A
// step's first run stays boxed, so its stack is checked against the schema.

// TypedCall: calls op on args (one Value per schema argument) and returns its result.
using TypedCall = Tensor (*)(const OperatorHandle& op, const Value* const* args);

template <class... A, size_t... I>
Tensor call_typed(const OperatorHandle& op, const Value* const* args, std::index_sequence<I...>) {
  return Dispatcher::singleton().call<Tensor, A...>(op, internal::Unbox<A>::get(*args[I])...);
}
template <class... A>
Tensor call_typed(const OperatorHandle& op, const Value* const* args) {
  return call_typed<A...>(op, args, std::index_sequence_for<A...>{});
}

constexpr size_t kMaxTypedArgs = 5;

// typed_call_for: the TypedCall of op's signature, or null when its arguments
// are not all tensors ('T') and scalars ('S') in one of the spellings below, or
// it does not return exactly one tensor.
TypedCall typed_call_for(const FunctionSchema& schema) {
  using T = const Tensor&;
  using S = const Scalar&;
  static constexpr std::pair<std::string_view, TypedCall> kCalls[] = {
      {"T", &call_typed<T>},           {"TT", &call_typed<T, T>},          {"TS", &call_typed<T, S>},
      {"TTS", &call_typed<T, T, S>},   {"TSS", &call_typed<T, S, S>},      {"TTT", &call_typed<T, T, T>},
      {"TTTSS", &call_typed<T, T, T, S, S>},
  };
  if (schema.returns().size() != 1) return nullptr;
  const ArgType& ret = schema.returns()[0].type;
  if (ret.kind != TypeKind::kTensor || ret.is_list || ret.is_optional) return nullptr;
  std::string spelling;
  for (const Argument& a : schema.arguments()) {
    if (a.type.is_list || a.type.is_optional) return nullptr;
    if (a.type.kind == TypeKind::kTensor) {
      spelling += 'T';
    } else if (a.type.kind == TypeKind::kScalar) {
      spelling += 'S';
    } else {
      return nullptr;
    }
  }
  for (const auto& [s, call] : kCalls) {
    if (s == spelling) return call;
  }
  return nullptr;
}

// call_node_typed: what dispatch_node does for n (whose op is op), through a
// TypedCall (See Note [Typed graph steps]).
Tensor call_node_typed(const Node& n, const OperatorHandle& op, TypedCall call, const Value* const* args,
                       std::string_view who) {
  try {
    return call(op, args);
  } catch (const NotImplementedError& e) {
    throw NotImplementedError(str_cat(who, ": node %", n.name(), " (", n.target()->name(), "): ", e.what()));
  } catch (const Error& e) {
    throw Error(str_cat(who, ": node %", n.name(), " (", n.target()->name(), "): ", e.what()));
  }
}

}  // namespace

namespace internal {

// Strides may differ: the ops handle any layout.
void check_graph_input(const Tensor& t, const Node& p, size_t i, bool check_sizes, std::string_view who) {
  const TensorMeta& want = p.tensor_meta();
  OPSPEC_CHECK(t.defined(), who, ": input ", i, " (%", p.name(), ") is undefined but the graph was traced with ",
               want.str());
  const bool same_sizes = check_sizes ? std::equal(t.sizes().begin(), t.sizes().end(), want.sizes.begin(), want.sizes.end())
                                      : t.dim() == static_cast<int64_t>(want.sizes.size());
  OPSPEC_CHECK(same_sizes && t.dtype() == want.dtype && t.device() == want.device, who, ": input ", i, " (%",
               p.name(), ") is ", TensorMeta::of(t).str(), " but the graph was traced with ", want.str());
}

Stack run_call_node(const Node& n, absl::FunctionRef<const Value&(const Node*)> value_of, std::string_view who) {
  Stack stack;
  stack.reserve(n.args().size());
  for (const NodeArg& a : n.args()) {
    if (a.is_value()) {
      stack.push_back(a.as_value());
    } else if (a.is_node()) {
      stack.push_back(value_of(a.as_node()));
    } else {
      std::vector<Tensor> list;
      for (const Node* x : a.as_node_list()) list.push_back(x == nullptr ? Tensor() : value_of(x).to_tensor());
      stack.push_back(std::move(list));
    }
  }
  dispatch_node(n, stack, who);
  return stack;
}

}  // namespace internal

// ---- GraphRunner ----

// Note [Graph runner plan]
// run_graph used to rebuild, on every run, a node -> position map and the
// release lists, and to look each argument's producer up by hash. A plan
// resolves all of it once: every node gets a value slot (its position), an
// argument is a graph value, a slot or a list of slots, and each step lists
// the slots whose last reader it is. Placeholders read the inputs directly.
// Checks and errors are those of run_graph, raised at run time, in its order;
// a call's stack is checked against its schema on the step's first
// successful run only, as the kinds of its values depend on the graph alone.
struct GraphRunner::Plan {
  // Source: one argument of a call node, or one entry of a list argument.
  struct Source {
    const Value* value = nullptr;  // a plain value (owned by the graph), or
    uint32_t slot = 0;             // the slot of the producing node
    uint32_t list_begin = 0, list_end = 0;  // a Tensor[] argument: list_slots[begin, end)
    enum class Kind : uint8_t { kValue, kSlot, kList } kind = Kind::kValue;
  };
  struct Step {
    const Node* node = nullptr;  // read only on the boxed path and for errors (a cache miss per node)
    NodeOp op = NodeOp::kPlaceholder;
    const OperatorHandle* target = nullptr;  // a call's op
    uint32_t args_begin = 0, args_end = 0;          // call, getitem, output: sources[begin, end)
    uint32_t release_begin = 0, release_end = 0;    // releases[begin, end)
    uint32_t input = 0;                             // placeholder: its input index
    TypedCall typed = nullptr;  // a call with no list argument: See Note [Typed graph steps]
  };

  const Graph* graph = nullptr;
  RunGraphOptions options;
  std::vector<Node*> nodes;
  std::vector<Node*> placeholders;
  std::vector<Step> steps;  // one per node, in order
  std::vector<Source> sources;
  std::vector<uint32_t> list_slots;
  std::vector<uint32_t> releases;
  Node* output = nullptr;
  std::unique_ptr<std::atomic<bool>[]> checked;  // per step: its stack passed check_stack once
  bool sets_grad_mode = false;  // has _set_grad_enabled nodes: the caller's mode is restored after a run

  std::vector<Tensor> run(absl::Span<const Tensor> inputs) const;
};

GraphRunner::GraphRunner(const Graph& g, RunGraphOptions options) {
  auto plan = std::make_shared<Plan>();
  plan->graph = &g;
  plan->options = options;
  plan->nodes = g.nodes();
  plan->placeholders = g.placeholders();
  plan->output = g.output();
  const std::vector<Node*>& nodes = plan->nodes;
  absl::flat_hash_map<const Node*, uint32_t> position;
  position.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) position[nodes[i]] = static_cast<uint32_t>(i);
  // Values live from their node until their last user has run, and no longer,
  // so the graph's peak memory matches eager execution (users are in graph order).
  std::vector<std::vector<uint32_t>> release_after(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::vector<Node*>& users = nodes[i]->users();
    release_after[users.empty() ? i : position.at(users.back())].push_back(static_cast<uint32_t>(i));
  }
  uint32_t next_input = 0;
  plan->steps.resize(nodes.size());
  plan->checked = std::make_unique<std::atomic<bool>[]>(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = *nodes[i];
    Plan::Step& step = plan->steps[i];
    step.node = &n;
    step.op = n.op();
    if (n.op() == NodeOp::kCall) step.target = n.target();
    if (sets_grad_mode(n)) plan->sets_grad_mode = true;
    if (n.op() == NodeOp::kPlaceholder) step.input = next_input++;
    step.args_begin = static_cast<uint32_t>(plan->sources.size());
    if (n.op() == NodeOp::kCall || n.op() == NodeOp::kGetItem || n.op() == NodeOp::kOutput) {
      for (const NodeArg& a : n.args()) {
        Plan::Source src;
        if (a.is_value()) {
          src.value = &a.as_value();
        } else if (a.is_node()) {
          src.kind = Plan::Source::Kind::kSlot;
          src.slot = position.at(a.as_node());
        } else {
          src.kind = Plan::Source::Kind::kList;
          src.list_begin = static_cast<uint32_t>(plan->list_slots.size());
          for (const Node* x : a.as_node_list()) plan->list_slots.push_back(x == nullptr ? kNoSlot : position.at(x));
          src.list_end = static_cast<uint32_t>(plan->list_slots.size());
        }
        plan->sources.push_back(src);
      }
    }
    step.args_end = static_cast<uint32_t>(plan->sources.size());
    if (n.op() == NodeOp::kCall && step.args_end - step.args_begin <= kMaxTypedArgs &&
        std::none_of(plan->sources.begin() + step.args_begin, plan->sources.end(),
                     [](const Plan::Source& s) { return s.kind == Plan::Source::Kind::kList; })) {
      step.typed = typed_call_for(n.target()->schema());
    }
    step.release_begin = static_cast<uint32_t>(plan->releases.size());
    plan->releases.insert(plan->releases.end(), release_after[i].begin(), release_after[i].end());
    step.release_end = static_cast<uint32_t>(plan->releases.size());
  }
  plan_ = std::move(plan);
}

std::vector<Tensor> GraphRunner::operator()(absl::Span<const Tensor> inputs) const { return plan_->run(inputs); }

std::vector<Tensor> GraphRunner::Plan::run(absl::Span<const Tensor> inputs) const {
  OPSPEC_CHECK(inputs.size() == placeholders.size(), "run_graph: the graph takes ", placeholders.size(),
               " input(s) (", absl::StrJoin(placeholders, ", ", [](std::string* o, const Node* p) {
                 o->append("%" + p->name());
               }),
               ") but ", inputs.size(), " were given");
  for (size_t i = 0; i < inputs.size(); ++i) {
    internal::check_graph_input(inputs[i], *placeholders[i], i, options.check_sizes, "run_graph");
  }
  OPSPEC_CHECK(output != nullptr, "run_graph: the graph has no output node");
  // The graph's grad mode changes end with it, errors too (See Note [Grad mode nodes]).
  std::optional<autograd::AutoGradMode> restore_grad_mode;
  if (sets_grad_mode) restore_grad_mode.emplace(autograd::is_grad_enabled());

  // A node's results: one Value (nearly every node), or a Stack for a
  // multi-output call; count is how many it has (0 once released).
  std::vector<Value> one(nodes.size());
  absl::flat_hash_map<uint32_t, Stack> many;  // few nodes have several outputs: no Stack per node
  std::vector<uint32_t> count(nodes.size(), 0);
  auto outputs_of = [&](uint32_t slot) -> absl::Span<const Value> {
    if (count[slot] == 1) return absl::Span<const Value>(&one[slot], 1);
    const auto it = many.find(slot);
    return it == many.end() ? absl::Span<const Value>() : absl::Span<const Value>(it->second);
  };
  auto value_of = [&](uint32_t slot, const Node& user) -> const Value& {
    OPSPEC_CHECK(count[slot] == 1, "run_graph: node %", user.name(), " uses %", nodes[slot]->name(), ", which has ",
                 count[slot], " outputs; select one with a getitem node");
    return one[slot];
  };
  auto set_one = [&](size_t slot, Value v) {
    one[slot] = std::move(v);
    count[slot] = 1;
  };
  Stack stack;  // reused by every call: results are moved out
  std::vector<Tensor> results;
  for (const Step& step : steps) {
    const Node& n = *step.node;
    const size_t i = static_cast<size_t>(&step - steps.data());
    switch (step.op) {
      case NodeOp::kPlaceholder: set_one(i, inputs[step.input]); break;
      case NodeOp::kConstant: set_one(i, constant_value(n)); break;
      case NodeOp::kGetItem: {
        const Node* source = n.args()[0].as_node();
        const absl::Span<const Value> call = outputs_of(sources[step.args_begin].slot);
        OPSPEC_CHECK(n.index() < static_cast<int64_t>(call.size()), "run_graph: node %", n.name(), " selects output ",
                     n.index(), " of %", source->name(), ", which has ", call.size());
        set_one(i, call[static_cast<size_t>(n.index())]);
        break;
      }
      case NodeOp::kCall: {
        if (step.typed != nullptr && checked[i].load(std::memory_order_relaxed)) {
          const Value* args[kMaxTypedArgs];
          for (uint32_t a = step.args_begin; a < step.args_end; ++a) {
            const Source& src = sources[a];
            args[a - step.args_begin] = src.kind == Source::Kind::kValue ? src.value : &value_of(src.slot, n);
          }
          set_one(i, call_node_typed(n, *step.target, step.typed, args, "run_graph"));
          break;
        }
        stack.clear();
        for (uint32_t a = step.args_begin; a < step.args_end; ++a) {
          const Source& src = sources[a];
          switch (src.kind) {
            case Source::Kind::kValue: stack.push_back(*src.value); break;
            case Source::Kind::kSlot: stack.push_back(value_of(src.slot, n)); break;
            case Source::Kind::kList: {
              std::vector<Tensor> list;
              list.reserve(src.list_end - src.list_begin);
              for (uint32_t k = src.list_begin; k < src.list_end; ++k) {
                list.push_back(list_slots[k] == kNoSlot ? Tensor() : value_of(list_slots[k], n).to_tensor());
              }
              stack.push_back(std::move(list));
              break;
            }
          }
        }
        const bool check = !checked[i].load(std::memory_order_relaxed);
        dispatch_node(n, stack, "run_graph", check);
        if (check) checked[i].store(true, std::memory_order_relaxed);
        if (stack.size() == 1) {
          set_one(i, std::move(stack[0]));
        } else {
          count[i] = static_cast<uint32_t>(stack.size());
          many[i] = std::move(stack);
          stack = Stack();
        }
        break;
      }
      case NodeOp::kOutput:
        for (uint32_t a = step.args_begin; a < step.args_end; ++a) {
          const uint32_t slot = sources[a].slot;
          const Value& v = value_of(slot, n);
          OPSPEC_CHECK(v.is_tensor(), "run_graph: output %", nodes[slot]->name(), " is a ", v.type_name(),
                       ", not a tensor");
          results.push_back(v.to_tensor());
        }
        break;
    }
    for (uint32_t r = step.release_begin; r < step.release_end; ++r) {
      const uint32_t slot = releases[r];
      one[slot] = Value();
      if (count[slot] > 1) many.erase(slot);
      count[slot] = 0;
    }
  }
  return results;
}

std::vector<Tensor> run_graph(const Graph& g, absl::Span<const Tensor> inputs) { return run_graph(g, inputs, {}); }

std::vector<Tensor> run_graph(const Graph& g, absl::Span<const Tensor> inputs, const RunGraphOptions& options) {
  return GraphRunner(g, options)(inputs);
}

}  // namespace opspec
