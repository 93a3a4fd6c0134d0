#include "runtime/compile/compile.h"

#include <iostream>
#include <mutex>

#include "absl/strings/str_join.h"
#include "runtime/compile/aot_autograd.h"
#include "runtime/compile/internal/capture.h"
#include "runtime/compile/internal/symbolic_sizes.h"
#include "runtime/compile/logging.h"
#include "runtime/fake/fake_tensor.h"
#include "runtime/graph/interpreter.h"

namespace opspec {
namespace internal {
namespace {

// Every compiled function's state, for reset().
struct Registry {
  std::mutex mu;
  std::vector<std::weak_ptr<CompiledState>> states;
};

Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

// example_inputs: fake tensors like inputs, dims left unguarded marked dynamic.
std::vector<Tensor> example_inputs(const std::vector<Tensor>& inputs, const GuardSet& guards) {
  FakeTensorMode fake;
  std::vector<Tensor> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor t = fake.from_real(inputs[i]);
    t.impl()->set_dim_marks(guards.tensors[i].dynamic_dims, 0);
    out.push_back(t);
  }
  return out;
}

// specialize_per_shape: a graph compiled for dynamic dims, by a backend that
// may bake sizes into what it builds, is compiled again (silently, not a
// recompile) for each new combination of input sizes it meets.
CompiledGraph specialize_per_shape(Backend backend, std::shared_ptr<const Graph> graph) {
  struct Specializations {
    std::mutex mu;
    std::vector<std::pair<std::vector<SizeVec>, CompiledGraph>> by_sizes;
  };
  auto cache = std::make_shared<Specializations>();
  return [backend = std::move(backend), graph = std::move(graph), cache](const std::vector<Tensor>& inputs) {
    std::vector<SizeVec> sizes;
    for (const Tensor& t : inputs) sizes.emplace_back(t.sizes().begin(), t.sizes().end());
    CompiledGraph compiled;
    {
      std::lock_guard<std::mutex> lock(cache->mu);
      for (const auto& [key, c] : cache->by_sizes) {
        if (key == sizes) compiled = c;
      }
      if (!compiled) {
        HideUserModesGuard hide;  // compiling is not running: See Note [Modes around a compiled call]
        FakeTensorMode fake;
        std::vector<Tensor> examples;
        for (const Tensor& t : inputs) examples.push_back(fake.from_real(t));
        // The same program with metadata for these sizes: traced again at
        // PreDispatch, so it keeps the captured (torch-level) ops.
        const Graph sized = make_fx(
            [&](const std::vector<Tensor>& in) { return run_graph(*graph, in, {.check_sizes = false}); },
            {.pre_dispatch = true, .fake_mode = &fake})(examples);
        compiled = backend(sized, examples);
        cache->by_sizes.emplace_back(sizes, compiled);
      }
    }
    return compiled(inputs);
  };
}

// with_numbers: compiled, given numbers after the graph's own inputs (the
// holes of Note [Values read with item()]); compiled itself when there are none.
CompiledGraph with_numbers(CompiledGraph compiled, std::vector<Tensor> numbers) {
  if (numbers.empty()) return compiled;
  return [compiled = std::move(compiled), numbers = std::move(numbers)](const std::vector<Tensor>& in) {
    std::vector<Tensor> all = in;
    all.insert(all.end(), numbers.begin(), numbers.end());
    return compiled(all);
  };
}

// read_with_item: the read that gave value, or null.
const ItemRead* read_with_item(const Scalar& value, const std::vector<ItemRead>& reads) {
  for (const ItemRead& r : reads) {
    if (r.value.to_double() == value.to_double()) return &r;
  }
  return nullptr;
}

// constant_change_reason: a recompile's reason when only a number changed:
// the guard Dynamo would have failed, `L['n'].item() == 3`, when the new
// number is a value the call read with item(); else the op and argument.
std::string constant_change_reason(const ConstantChange& c, const std::vector<ItemRead>& reads) {
  if (const ItemRead* r = read_with_item(c.after, reads)) {
    return str_cat(r->source, ".item() == ", c.before.str(), " (the value read with item() is now ", c.after.str(),
                   ")");
  }
  return str_cat("a number in the program changed: argument ", c.slot.arg, " of ", c.op, " was ", c.before.str(),
                 ", now ", c.after.str());
}

// Note [Specialized dynamic dims]
// A dim made dynamic may still be fixed by the graph: it is added to a tensor
// of fixed size, or a size computed from it reached an op as a number. The
// re-traces of Note [Symbolic sizes by re-tracing] find such a symbol. When
// one of its dims was marked with mark_dynamic the user asserted it is free:
// PyTorch's "Constraints violated" error. Otherwise (dynamic = true, or
// automatic dynamic) the dims are specialized, as PyTorch specializes a
// symbol a guard pins: the guards check their sizes, and the graph is built
// again without that symbol.

// symbolic_graph: for graph g on inputs with guards, the guards with every
// specialized symbol made static, and g's code with symbolic sizes. Throws
// ConstraintViolationError for a specialized dim marked with mark_dynamic.
std::pair<GuardSet, std::string> symbolic_graph(const Graph& g, GuardSet guards, const std::vector<Tensor>& inputs,
                                                std::vector<uint64_t> dynamic, const std::vector<std::string>& names,
                                                const std::vector<std::string>& sources) {
  const Retrace retrace = [&](const std::vector<Tensor>& moved) -> std::optional<Graph> {
    try {
      return make_fx([&](const std::vector<Tensor>& in) { return run_graph(g, in, {.check_sizes = false}); },
                     {.pre_dispatch = true, .input_names = names})(moved);
    } catch (const Error&) {
      return std::nullopt;
    }
  };
  if (!guards.has_dynamic_dims()) return {std::move(guards), g.str()};
  // The moved traces are compared with a trace of the same kind, not with g itself.
  const std::optional<Graph> base = retrace(inputs);
  if (!base) return {std::move(guards), g.str()};
  while (guards.has_dynamic_dims()) {
    const SymbolicSizes sizes = symbolic_sizes(*base, guards, inputs, retrace);
    if (!sizes.specialized) return {std::move(guards), symbolic_str(*base, sizes.metas)};
    const ShapeSymbol& s = guards.symbols[*sizes.specialized];
    for (const auto& [i, d] : s.uses) {
      if ((inputs[i].impl()->dynamic_dims() >> d) & 1) {
        throw ConstraintViolationError(constraint_violation(
            str_cat(guards.tensors[i].source, ".size()[", d, "]"), s.hint,
            str_cat("the graph fails or changes when it is ", sizes.specialized_value,
                    " (it meets a fixed size, or reaches an op as a number); it was marked with mark_dynamic")));
      }
      dynamic[i] &= ~(uint64_t{1} << d);
    }
    guards = GuardSet::make(inputs, names, sources, dynamic);
  }
  return {std::move(guards), g.str()};
}

std::vector<std::string> ops_of(const Graph& g) {
  std::vector<std::string> ops;
  for (Node* n : g.nodes()) {
    if (n->op() == NodeOp::kCall) ops.push_back(n->target()->name());
  }
  return ops;
}

}  // namespace

void CompiledState::clear() {
  positions.clear();
  recordings.clear();
  plans.clear();
  limited.clear();
  breaks_seen.clear();
  automatic_dynamic.clear();
  stats = CompileStats();
}

bool CompiledState::note_break(const GraphBreak& b, size_t position, bool traced) {
  std::lock_guard<std::mutex> lock(mu);
  const bool first = breaks_seen.emplace(position, b.reason, b.user_site).second;
  if (!traced && !first) return false;
  stats.breaks.push_back(b);
  return true;
}

std::vector<std::shared_ptr<const Recording>> CompiledState::recordings_at(size_t position) {
  std::lock_guard<std::mutex> lock(mu);
  if (position >= recordings.size()) return {};
  return recordings[position];
}

void CompiledState::add_recording(size_t position, std::shared_ptr<const Recording> r) {
  std::lock_guard<std::mutex> lock(mu);
  if (recordings.size() <= position) recordings.resize(position + 1);
  auto& list = recordings[position];
  list.insert(list.begin(), std::move(r));
  if (list.size() > kMaxRecordings) list.pop_back();
}

// Note [Cache size limit per graph]
// Dynamo caches per code object, and a graph break makes the rest of the
// function a resume function with a cache of its own; so its
// cache_size_limit counts the graphs of one code object. Past it (2.x's
// RecompileLimitExceeded: FrameAction.RUN_ONLY), that code still runs the
// graphs it has cached, and an input that matches none runs uncompiled. The
// same here per graph position: a position with cache_size_limit entries
// compiles no more, runs its cached graphs, and runs a miss eagerly, with one
// warning per position; the other positions keep their own counts. (It used
// to be one count per function, and past it every call ran eagerly: after a
// break, cache_size_limit: 1 left the second graph uncompiled on the first call.)

// Note [Automatic dynamic]
// PyTorch compiles sizes static first; when a recompile is caused by a size
// change, the dims whose size changed become dynamic in the new graph
// (torch._dynamo.config.automatic_dynamic_shapes, on by default), so a third
// size reuses it. The same here: on a recompile of the same program, every
// input dim whose size differs from the last entry's guard is remembered,
// by the input's source, and is a symbol in every later graph of the
// function (0/1 specialization still applies). CompileOptions::dynamic =
// false turns it off, true makes every dim dynamic from the start.

std::vector<uint64_t> CompiledState::dynamic_dims_for(const std::vector<Tensor>& inputs,
                                                      const std::vector<std::string>& sources) const {
  std::vector<uint64_t> dims;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    const uint64_t all = t.dim() >= 64 ? ~uint64_t{0} : (uint64_t{1} << t.dim()) - 1;
    const uint64_t marked = t.impl()->dynamic_dims() & all, fixed = t.impl()->static_dims();
    uint64_t d = marked;
    if (options.dynamic == true) {
      d |= all & ~fixed;
    } else if (!options.dynamic.has_value()) {
      if (auto it = automatic_dynamic.find(sources[i]); it != automatic_dynamic.end()) d |= it->second & all & ~fixed;
    }
    dims.push_back(d);
  }
  return dims;
}

void CompiledState::note_size_changes(const GuardSet& last, const std::vector<Tensor>& inputs) {
  if (options.dynamic.has_value()) return;  // See Note [Automatic dynamic]
  for (size_t i = 0; i < inputs.size() && i < last.tensors.size(); ++i) {
    const TensorGuard& g = last.tensors[i];
    const Tensor& t = inputs[i];
    if (!t.defined() || t.dim() != static_cast<int64_t>(g.sizes.size())) continue;
    for (int64_t d = 0; d < t.dim() && d < 64; ++d) {
      if (t.sizes()[d] != g.sizes[d]) automatic_dynamic[g.source] |= uint64_t{1} << d;
    }
  }
}

CompiledFor CompiledState::compiled_for(const Graph& graph, const std::vector<Tensor>& inputs,
                                        const std::vector<std::string>& names,
                                        const std::vector<std::string>& sources, size_t position,
                                        const std::vector<ItemRead>& reads, bool cache_only) {
  // The user's callbacks run after the lock is released (they may read stats()).
  std::optional<GuardFailure> failed;
  std::optional<GuardSet> exported;
  CompiledFor found;
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(mu);
    try {
      found = compiled_for_locked(graph, inputs, names, sources, position, reads, cache_only, failed, exported);
    } catch (...) {
      error = std::current_exception();
    }
  }
  if (failed && options.guard_fail_fn) options.guard_fail_fn(*failed);
  if (exported && options.guard_export_fn) options.guard_export_fn(*exported);
  if (error) std::rethrow_exception(error);
  return found;
}

CompiledFor CompiledState::compiled_for_locked(const Graph& graph, const std::vector<Tensor>& inputs,
                                               const std::vector<std::string>& names,
                                               const std::vector<std::string>& sources, size_t position,
                                               const std::vector<ItemRead>& reads, bool cache_only,
                                               std::optional<GuardFailure>& failed,
                                               std::optional<GuardSet>& exported) {
  const uint64_t program = graph.structural_hash(/*include_metadata=*/false);
  if (positions.size() <= position) positions.resize(position + 1);
  std::vector<std::shared_ptr<const CacheEntry>>& candidates = positions[position];
  for (const auto& e : candidates) {
    if (e->holes.empty()) {
      if (e->program == program && !e->guards.first_failure(inputs)) return {e->compiled, e};
      continue;
    }
    if (e->program != holes_hash(graph, e->holes)) continue;
    std::vector<Tensor> all = inputs;
    const std::vector<Tensor> numbers = hole_values(graph, e->holes);
    all.insert(all.end(), numbers.begin(), numbers.end());
    if (!e->guards.first_failure(all)) return {with_numbers(e->compiled, numbers), e};
  }
  std::vector<ScalarSlot> holes;  // See Note [Values read with item()]
  // Past its cache_size_limit a position only runs what it has cached: a miss
  // is no recompile, logs nothing and calls no guard_fail_fn (See Note [Cache
  // size limit per graph]); it runs eagerly below.
  const bool run_only = position < limited.size() && limited[position];
  if (!candidates.empty() && !run_only) {
    const CacheEntry& last = *candidates.back();
    std::string reason;
    if (last.program == program) {
      reason = *last.guards.first_failure(inputs);
      if (!cache_only) note_size_changes(last.guards, inputs);
    } else if (auto changes = last.graph ? constant_changes(*last.graph, graph) : std::nullopt;
               changes && !changes->empty()) {
      reason = constant_change_reason(changes->front(), reads);
      if (!options.error_on_recompile) {
        for (const ConstantChange& c : *changes) {
          if (read_with_item(c.after, reads)) holes.push_back(c.slot);  // other numbers stay specialized
        }
      }
    } else {
      reason = "the program changed (a different sequence of ops)";
    }
    failed = GuardFailure{reason, options.name, position};
    const std::string message = str_cat("Recompiling function ", options.name, " (graph ", position + 1,
                                        ")\n    triggered by the following guard failure(s):\n    - ", reason);
    if (!cache_only) {
      if (options.error_on_recompile) throw RecompileError(message);
      ++stats.recompiles;
      stats.recompile_reasons.push_back(reason);
      log_message("recompiles", message);
    }
  }
  // Automatic dynamic: the numbers that changed become inputs of this graph.
  const std::shared_ptr<const Graph> captured = std::make_shared<const Graph>(graph.clone());
  std::optional<Graph> holed;
  std::vector<Tensor> all_inputs = inputs;
  std::vector<std::string> all_names = names, all_sources = sources;
  std::vector<Tensor> numbers;
  if (!holes.empty()) {
    holed = with_holes(graph, holes);
    numbers = hole_values(graph, holes);
    all_inputs.insert(all_inputs.end(), numbers.begin(), numbers.end());
    for (size_t i = 0; i < numbers.size(); ++i) {
      all_names.push_back(str_cat("scalar_", i));
      all_sources.push_back(all_names.back());
    }
  }
  const Graph& program_graph = holed ? *holed : graph;
  const std::vector<uint64_t> dynamic = dynamic_dims_for(all_inputs, all_sources);
  GuardSet guards = GuardSet::make(all_inputs, all_names, all_sources, dynamic);
  // run(fn) compiles nothing: a miss runs the graph eagerly, as PyTorch's run() runs the frame uncompiled.
  if (cache_only) return {with_numbers(eager_backend(program_graph, example_inputs(all_inputs, guards)), numbers), nullptr};
  // See Note [Cache size limit per graph].
  if (candidates.size() >= static_cast<size_t>(options.cache_size_limit)) {
    if (limited.size() <= position) limited.resize(position + 1);
    if (!limited[position]) {
      std::cerr << str_cat("[opspec] compile(", options.name, "): cache_size_limit reached (",
                           options.cache_size_limit, " graphs) for graph ", position + 1,
                           "; inputs that match none of its graphs run that part eagerly from now on. Last reason: ",
                           stats.recompile_reasons.empty() ? "none" : stats.recompile_reasons.back(), "\n");
    }
    limited[position] = true;
    stats.fell_back_to_eager = true;
    return {with_numbers(eager_backend(program_graph, example_inputs(all_inputs, guards)), numbers), nullptr};
  }
  std::string code;  // the graph's code, sizes symbolic (See Note [Specialized dynamic dims])
  {
    HideUserModesGuard hide;  // re-tracing is not running: See Note [Modes around a compiled call]
    std::tie(guards, code) = symbolic_graph(program_graph, std::move(guards), all_inputs, dynamic, all_names, all_sources);
  }
  // A hole's example stays a wrapped number, so a traced graph promotes types
  // as eager does (int tensor * 2.5 is f32, not f64); make_fx keeps it an input.
  const std::vector<Tensor> examples = example_inputs(all_inputs, guards);
  if (log_enabled("guards")) {
    log_message("guards", str_cat("GUARDS of graph ", position + 1, " of ", options.name, ":\n",
                                  absl::StrJoin(guards.code(), "\n")));
  }
  CompiledGraph compiled;
  // A backend that traces (aot_eager's make_fx) runs ops on fake tensors: the
  // user's modes must not see them (See Note [Modes around a compiled call]).
  HideUserModesGuard hide;
  if (log_enabled("graph_code")) log_message("graph_code", str_cat("Graph ", position + 1, " of ", options.name, ":\n", code));
  if (guards.has_dynamic_dims() && (options.backend_fn || options.backend != "eager")) {
    compiled = specialize_per_shape(backend, std::make_shared<const Graph>(program_graph.clone()));
  } else {
    compiled = backend(program_graph, examples);
  }
  // Calls whose inputs need a gradient take the AOT path (See Note [AOT autograd]).
  const Backend backward = options.backward_backend_fn       ? options.backward_backend_fn
                           : !options.backward_backend.empty() ? lookup_backend(options.backward_backend)
                                                              : backend;
  compiled = with_aot_autograd(std::move(compiled), std::make_shared<const Graph>(program_graph.clone()), backend,
                               backward, [this, position](const AotGraphs& g) {
                                 const std::string code = str_cat("forward:\n", g.forward->str(), "\nbackward:\n",
                                                                  g.backward->str());
                                 if (log_enabled("graph_code")) {
                                   log_message("graph_code", str_cat("AOT graphs ", position + 1, " of ", options.name,
                                                                     ":\n", code));
                                 }
                                 std::lock_guard<std::mutex> lock(mu);
                                 stats.aot_graphs.push_back(code);
                               });
  const uint64_t key = holes.empty() ? program : holes_hash(graph, holes);
  auto entry = std::make_shared<const CacheEntry>(CacheEntry{key, guards, compiled, holes, captured});
  candidates.push_back(entry);
  ++stats.compiles;
  stats.ops_per_graph.push_back(ops_of(program_graph));
  stats.graphs.push_back(code);
  stats.guards.push_back(guards.summary());
  stats.guard_code.push_back(absl::StrJoin(guards.code(), "\n"));
  if (options.guard_export_fn) exported = guards;
  return {with_numbers(std::move(compiled), numbers), std::move(entry), /*compiled_now=*/true};
}

}  // namespace internal

CompiledFunction::CompiledFunction(TracedFunction fn, CompileOptions options)
    : state_(std::make_shared<internal::CompiledState>()) {
  state_->fn = std::move(fn);
  state_->backend = options.backend_fn ? options.backend_fn : lookup_backend(options.backend);
  state_->options = std::move(options);
  OPSPEC_CHECK(state_->options.cache_size_limit >= 1, "compile: cache_size_limit must be at least 1, got ",
               state_->options.cache_size_limit);
  internal::Registry& r = internal::registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::erase_if(r.states, [](const auto& w) { return w.expired(); });
  r.states.push_back(state_);
}

std::vector<Tensor> CompiledFunction::operator()(const std::vector<Tensor>& inputs) const {
  check_inputs(inputs);
  std::shared_ptr<const internal::TracedPlan> plan;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    ++state_->stats.calls;
    if (state_->options.trace_once) plan = internal::find_plan(*state_, inputs);
  }
  internal::CaptureSession* outer = internal::CaptureSession::current();
  // Inside a recursive disable() nothing compiles; inside another compiled
  // function's capture this one's ops join that capture (Dynamo inlines it).
  if (state_->options.disable || internal::disabled_depth() > 0 ||
      (outer != nullptr && !outer->suspended())) {
    return state_->fn(inputs);
  }
  if (plan != nullptr) return internal::run_plan(*state_, *plan, inputs);  // See Note [Trace once].
  internal::CaptureSession session(*state_, inputs, cache_only_);
  return session.run();
}

// Guards and fakes read every input's metadata: an undefined one is named here
// rather than crashing there, as are input_names that no input answers to.
void CompiledFunction::check_inputs(const std::vector<Tensor>& inputs) const {
  const CompileOptions& o = state_->options;
  OPSPEC_CHECK(o.input_names.size() <= inputs.size(), "compile: ", o.name, " was called with ", inputs.size(),
               inputs.size() == 1 ? " input" : " inputs", " but CompileOptions::input_names has ", o.input_names.size(),
               " names (", absl::StrJoin(o.input_names, ", "), "); give at most one name per input");
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].defined()) [[likely]] continue;
    OPSPEC_FAIL("compile: input ", i, i < o.input_names.size() ? str_cat(" ('", o.input_names[i], "')") : "", " of ",
                o.name, " is an undefined Tensor; a compiled function takes defined tensors");
  }
}

CompiledFunction run(const CompiledFunction& fn) {
  CompiledFunction cached = fn;
  cached.cache_only_ = true;
  return cached;
}

CompileStats CompiledFunction::stats() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->stats;
}

CompileCounters CompiledFunction::counters() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  const CompileStats& s = state_->stats;
  return {s.calls, s.graphs_run, s.compiles, s.recompiles, static_cast<int>(s.breaks.size())};
}

void CompiledFunction::reset() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->clear();
}

void reset() {
  std::vector<std::shared_ptr<internal::CompiledState>> states;
  {
    internal::Registry& r = internal::registry();
    std::lock_guard<std::mutex> lock(r.mu);
    for (const auto& w : r.states) {
      if (auto s = w.lock()) states.push_back(std::move(s));
    }
  }
  for (const auto& s : states) {
    std::lock_guard<std::mutex> lock(s->mu);
    s->clear();
  }
}

}  // namespace opspec
