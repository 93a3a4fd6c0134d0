#include "runtime/dispatch/mode.h"

#include <algorithm>
#include <optional>

#include "absl/container/inlined_vector.h"
#include "runtime/core/error.h"

namespace opspec {
namespace {

// The three keys that have mode stacks, and their slot in ModeState::stacks.
constexpr DispatchKey kModeKeys[] = {DispatchKey::kPython, DispatchKey::kFunctionMode, DispatchKey::kPreDispatch};

[[noreturn]] void not_a_mode_key(DispatchKey key) {
  OPSPEC_FAIL("modes can be pushed at the Python, FunctionMode or PreDispatch key, not ",
              dispatch_key_name(key));
}

int stack_index(DispatchKey key) {
  switch (key) {
    case DispatchKey::kPython: return 0;
    case DispatchKey::kFunctionMode: return 1;
    case DispatchKey::kPreDispatch: return 2;
    default: not_a_mode_key(key);
  }
}

struct ModeState {
  std::vector<std::shared_ptr<DispatchMode>> stacks[3];
  std::shared_ptr<DispatchMode> infra[2];  // proxy, fake
};

thread_local ModeState tls_modes;

}  // namespace

constinit thread_local ModeCensus internal::tls_mode_census;

namespace {

// Proxy and fake modes at the Python key have their own slots (consulted after
// user subclasses); at the other keys every mode lives on that key's stack.
bool uses_infra_slot(const DispatchMode& mode) {
  return mode.kind() != ModeKind::kUser && mode.key() == DispatchKey::kPython;
}

std::shared_ptr<DispatchMode>& infra_slot(ModeKind kind) {
  OPSPEC_INTERNAL_ASSERT(kind != ModeKind::kUser);
  return tls_modes.infra[kind == ModeKind::kProxy ? 0 : 1];
}

// Keeps LocalDispatchKeySet::modes equal to "which keys have any mode".
void refresh_mode_keys() {
  DispatchKeySet keys;
  for (int i = 0; i < 3; ++i) {
    if (!tls_modes.stacks[i].empty()) keys = keys.add(kModeKeys[i]);
  }
  if (tls_modes.infra[0] || tls_modes.infra[1]) keys = keys.add(DispatchKey::kPython);
  local_dispatch_key_set().modes = keys;
  const ModeState& m = tls_modes;
  internal::tls_mode_census = {m.stacks[0].size(), m.stacks[1].size(), m.stacks[2].size(), m.infra[0] != nullptr,
                               m.infra[1] != nullptr};
}

// refresh_stack_key: refresh_mode_keys after a change to user stack `index`
// alone: a handler's pop and push-back, twice per handled call, redo only
// that key (every other change refreshes all, so the rest is current; the
// Python key's infra slots are read from the census).
[[gnu::always_inline]] inline void refresh_stack_key(const ModeState& m, int index) {
  const size_t n = m.stacks[index].size();
  ModeCensus& census = internal::tls_mode_census;
  bool on = n != 0;
  switch (index) {
    case 0:
      census.python = n;
      on = on || census.proxy || census.fake;
      break;
    case 1: census.function = n; break;
    default: census.pre_dispatch = n; break;
  }
  DispatchKeySet& keys = local_dispatch_key_set().modes;
  keys = on ? keys.add(kModeKeys[index]) : keys.remove(kModeKeys[index]);
}

// kMaxHandlerDepth: the most mode handlers (or subclass handlers) running
// nested on one thread. A handler that calls its own op on its own mode (a
// mode that pushes itself again, a subclass op on its own tensors) recursed
// until the C++ stack overflowed (Python stops it with RecursionError). Real
// nesting is a few levels; 256 keeps within a thread's stack, sanitizers too.
constexpr int kMaxHandlerDepth = 256;

[[noreturn, gnu::cold, gnu::noinline]] void throw_too_deep(const DispatchMode& mode) {
  OPSPEC_FAIL("maximum recursion depth exceeded: ", kMaxHandlerDepth, " mode handlers nested, the innermost ",
              mode.name(), " (a handler that calls ops its own mode handles again, e.g. after pushing itself; "
              "PyTorch raises RecursionError)");
}

class TemporarilyPopped;
// The innermost TemporarilyPopped on this thread; each links to the one it
// nests in (they are locals of nested handler calls, so strictly LIFO).
constinit thread_local TemporarilyPopped* tls_innermost_popped = nullptr;

// ModePlace: where the mode about to handle a call is: the top of user stack
// `index` (0..2, as kModeKeys), or an infra slot (slot set; index 0, Python).
// The caller knows it, so taking the mode out asks the mode nothing.
struct ModePlace {
  int index;
  std::shared_ptr<DispatchMode>* slot = nullptr;

  static ModePlace top_of(int index) { return {index}; }
  static ModePlace infra(std::shared_ptr<DispatchMode>& slot) { return {0, &slot}; }
  std::shared_ptr<DispatchMode>& mode(ModeState& m) const { return slot != nullptr ? *slot : m.stacks[index].back(); }
};

// Takes a mode off its stack or slot for a handler's duration, and puts it
// back, unless the mode's guard ended meanwhile (See Note [A guard ending
// inside its own handler]).
class TemporarilyPopped {
 public:
  // Moves the owning pointer out and back: no refcount traffic per call. The
  // place it came from is kept, so putting it back asks the mode nothing.
  explicit TemporarilyPopped(ModeState& m, ModePlace place)
      : outer_(tls_innermost_popped), depth_(outer_ != nullptr ? outer_->depth_ + 1 : 1), index_(place.index) {
    if (depth_ > kMaxHandlerDepth) throw_too_deep(*place.mode(m));  // before anything changes
    if (place.slot == nullptr) {
      stack_ = &m.stacks[index_];
      OPSPEC_INTERNAL_ASSERT(!stack_->empty());
      mode_ = std::move(stack_->back());
      stack_->pop_back();
    } else {
      slot_ = place.slot;
      OPSPEC_INTERNAL_ASSERT(*slot_ != nullptr);
      mode_ = std::move(*slot_);
    }
    tls_innermost_popped = this;  // last: nothing above may throw once linked
    refresh(m);
  }
  ~TemporarilyPopped() {
    tls_innermost_popped = outer_;
    if (ended_) return;  // its guard ended in the handler: nothing to put back (keys already refreshed)
    if (stack_ != nullptr) {
      stack_->push_back(std::move(mode_));
    } else {
      *slot_ = std::move(mode_);
    }
    refresh(tls_modes);
  }
  TemporarilyPopped(const TemporarilyPopped&) = delete;
  TemporarilyPopped& operator=(const TemporarilyPopped&) = delete;

  // end: the guard of mode, if this or an outer TemporarilyPopped holds it,
  // ended: it is not put back. Whether one held it.
  static bool end(const DispatchMode* mode) {
    for (TemporarilyPopped* p = tls_innermost_popped; p != nullptr; p = p->outer_) {
      if (p->mode_.get() == mode && !p->ended_) {
        p->ended_ = true;
        return true;
      }
    }
    return false;
  }

 private:
  void refresh(const ModeState& m) {
    if (stack_ != nullptr) {
      refresh_stack_key(m, index_);
    } else {
      refresh_mode_keys();
    }
  }

  TemporarilyPopped* outer_;
  int depth_;  // handlers nested on this thread, this one included
  int index_;  // the user stack the mode came from (0 for an infra slot)
  bool ended_ = false;
  std::shared_ptr<DispatchMode> mode_;
  std::vector<std::shared_ptr<DispatchMode>>* stack_ = nullptr;  // its stack, or
  std::shared_ptr<DispatchMode>* slot_ = nullptr;                // its infra slot
};

// One handler in the chain: a mode or a subclass.
// The proxy and fake modes are named by their slot, read when their turn
// comes: a handler before them may have pushed or ended one (Note [Handlers see
// the live mode stack]).
struct Handler {
  std::optional<ModeKind> slot;  // kProxy or kFake: the mode in that slot, if any then
  std::shared_ptr<TensorSubclass> subclass;
};
using HandlerChain = absl::InlinedVector<Handler, 4>;

void add_subclasses(const Stack& stack, ModeKind kind, HandlerChain& chain) {
  auto consider = [&](const Tensor& t) {
    if (!t.defined() || !t.impl()->subclass()) return;
    const auto& sub = t.impl()->subclass();
    if (sub->kind() != kind) return;
    for (const Handler& h : chain) {
      if (h.subclass == sub) return;
    }
    chain.push_back({std::nullopt, sub});
  };
  for (const Value& v : stack) {
    if (v.is_tensor()) consider(v.to_tensor());
    if (v.is_tensor_list()) {
      for (const Tensor& t : v.to_tensor_list()) consider(t);
    }
  }
}

// has_subclassed_tensor: whether an argument is a subclassed tensor (or a
// tensor list, which add_subclasses looks into).
bool has_subclassed_tensor(const Stack& stack) {
  bool subclassed = false;
  for (const Value& v : stack) {
    if (v.is_tensor()) subclassed |= v.to_tensor().defined() && v.to_tensor().impl()->subclass() != nullptr;
    if (v.is_tensor_list()) subclassed = true;  // rare: let add_subclasses look
  }
  return subclassed;
}

bool has_infra_modes() { return tls_modes.infra[0] != nullptr || tls_modes.infra[1] != nullptr; }

// infra_chain: the Python key's handlers after its user modes: user
// subclasses, the proxy mode, proxy subclasses, the fake mode, fake subclasses.
// subclassed: has_subclassed_tensor(stack), when the caller knows it.
HandlerChain infra_chain(const Stack& stack, bool subclassed) {
  HandlerChain chain;
  if (subclassed) add_subclasses(stack, ModeKind::kUser, chain);
  chain.push_back({ModeKind::kProxy, nullptr});
  if (subclassed) add_subclasses(stack, ModeKind::kProxy, chain);
  chain.push_back({ModeKind::kFake, nullptr});
  if (subclassed) add_subclasses(stack, ModeKind::kFake, chain);
  return chain;
}

// redispatch_below: what follows the last handler: the kernels below `key`, with `key` excluded.
[[gnu::always_inline]] inline void redispatch_below(const OperatorHandle& op, DispatchKeySet ks, DispatchKey key,
                                                   Stack& stack) {
  ExcludeDispatchKeyGuard exclude(key);
  Dispatcher::singleton().redispatch_boxed(op, ks & DispatchKeySet::below(key), stack);
}

// throw_bad_results: check_results' error, naming the handler (a mode or a subclass; the other is null).
[[noreturn, gnu::cold, gnu::noinline]] void throw_bad_results(const OperatorHandle& op, const Stack& stack,
                                                             DispatchMode* mode, TensorSubclass* subclass) {
  OPSPEC_FAIL(mode ? "mode " : "tensor subclass ", mode ? mode->name() : subclass->name(), " handled ",
              op.name(), " but left ", stack.size(), stack.size() == 1 ? " value" : " values",
              " on the stack, the schema returns ", op.schema().returns().size(), " (", op.schema().str(),
              "); a handler that returns true must leave the results there, e.g. by call.proceed()");
}

// check_results: a handler that says it handled a call must leave the
// schema's results; otherwise the caller would misread the arguments left
// there ("expected a value of type Tensor but got int[]"), naming neither.
// Inline and name-free: it runs after every handled call.
inline void check_results(const OperatorHandle& op, const Stack& stack, DispatchMode* mode,
                          TensorSubclass* subclass = nullptr) {
  if (stack.size() != op.schema().returns().size()) [[unlikely]] throw_bad_results(op, stack, mode, subclass);
}

// Note [Handlers see the live mode stack]
// PyTorch's handler calls func(*args), which dispatches again through the
// mode stack as it is then: its own mode is off it, an outer mode is next, a
// mode the handler pushed comes first, and one it hid is skipped. So the user
// modes of a key are not listed up front: each step takes the live stack's
// innermost mode (a mode handling a call is off the stack, so what is left is
// what has yet to run). Infra modes and subclasses (chain) follow, in Note
// [Mode and subclass order]'s order. A chain listed at entry once asserted
// when a handler pushed a mode and then proceeded.

void run_chain(const OperatorHandle& op, DispatchKeySet ks, DispatchKey key, const HandlerChain& chain,
               size_t i, Stack& stack);

// run_mode: mode (the innermost of its stack or slot) handles the call; next
// continues after it. alone: no other handler follows (only then may it answer
// without ops).
void run_mode(const OperatorHandle& op, ModePlace place, Stack& stack, absl::FunctionRef<void(Stack&)> next,
              bool alone = false) {
  ModeState& m = tls_modes;
  DispatchMode& mode = *place.mode(m);
  if (alone && mode.answer_without_ops(op, stack)) {  // See Note [Answers that run no op]
    check_results(op, stack, &mode);
    return;
  }
  TemporarilyPopped popped(m, place);  // owns the mode until it is pushed back
  OpCall call(op, stack, next);
  if (mode.dispatch(call)) {
    check_results(op, stack, &mode);
  } else if (!call.proceeded()) {
    next(stack);
  }
}

void run_chain(const OperatorHandle& op, DispatchKeySet ks, DispatchKey key, const HandlerChain& chain,
               size_t i, Stack& stack) {
  // A handler that excluded the key (ExcludeModesGuard) before it proceeded
  // reaches no handler after it, as func(*args) would not.
  if (local_dispatch_key_set().excluded.has(key)) return redispatch_below(op, ks, key, stack);
  const int index = stack_index(key);
  if (!tls_modes.stacks[index].empty()) {  // See Note [Handlers see the live mode stack]
    return run_mode(op, ModePlace::top_of(index), stack, [&](Stack& s) { run_chain(op, ks, key, chain, i, s); });
  }
  if (i == chain.size()) return redispatch_below(op, ks, key, stack);
  const Handler& h = chain[i];
  auto next = [&](Stack& s) { run_chain(op, ks, key, chain, i + 1, s); };  // outlives call (FunctionRef)
  if (h.slot) {
    std::shared_ptr<DispatchMode>& slot = infra_slot(*h.slot);
    return slot ? run_mode(op, ModePlace::infra(slot), stack, next) : next(stack);
  }
  // A subclass handler is not popped: an op on its own tensors comes back to it.
  static constinit thread_local int subclass_depth = 0;
  if (subclass_depth >= kMaxHandlerDepth) {
    OPSPEC_FAIL("maximum recursion depth exceeded: ", kMaxHandlerDepth, " tensor subclass handlers nested, the "
                "innermost ", h.subclass->name(), " (a handler that runs ops on its own subclassed tensors; unwrap "
                "them first; PyTorch raises RecursionError)");
  }
  struct Depth {
    Depth() { ++subclass_depth; }
    ~Depth() { --subclass_depth; }
  } depth;
  OpCall call(op, stack, next);
  if (h.subclass->dispatch(call)) {
    check_results(op, stack, nullptr, h.subclass.get());
  } else if (!call.proceeded()) {
    next(stack);
  }
}

// run_only_mode: one mode and nothing after it (how nearly every mode runs),
// without building a chain; if the handler changes the stack before it
// proceeds, the rest runs as run_chain would.
void run_only_mode(const OperatorHandle& op, DispatchKeySet ks, DispatchKey key, ModePlace place, Stack& stack) {
  run_mode(op, place, stack, [&](Stack& s) {
    if (key != DispatchKey::kPython) {
      run_chain(op, ks, key, HandlerChain(), 0, s);  // the live stack, usually empty now
    } else if (tls_modes.stacks[0].empty() && !has_infra_modes()) {
      redispatch_below(op, ks, key, s);
    } else {
      run_chain(op, ks, key, infra_chain(s, has_subclassed_tensor(s)), 0, s);
    }
  }, /*alone=*/true);
}

// See Note [Mode and subclass order].
void python_fallback(const OperatorHandle& op, DispatchKeySet ks, Stack& stack) {
  // Few calls see a subclassed tensor: look once, and skip the three scans.
  const bool subclassed = has_subclassed_tensor(stack);
  ModeState& m = tls_modes;
  const int infra_modes = (m.infra[0] ? 1 : 0) + (m.infra[1] ? 1 : 0);
  if (!subclassed && m.stacks[0].size() + infra_modes == 1) {
    run_only_mode(op, ks, DispatchKey::kPython,
                  !m.stacks[0].empty() ? ModePlace::top_of(0) : ModePlace::infra(m.infra[m.infra[0] ? 0 : 1]), stack);
    return;
  }
  run_chain(op, ks, DispatchKey::kPython, infra_chain(stack, subclassed), 0, stack);
}

void mode_stack_fallback(DispatchKey key, const OperatorHandle& op, DispatchKeySet ks, Stack& stack) {
  const int index = stack_index(key);
  if (tls_modes.stacks[index].size() == 1) return run_only_mode(op, ks, key, ModePlace::top_of(index), stack);
  run_chain(op, ks, key, HandlerChain(), 0, stack);  // every mode is on the live stack
}

}  // namespace

void OpCall::proceed() {
  OPSPEC_CHECK(!proceeded_, op_.name(), ": OpCall::proceed() called twice by the same handler");
  proceeded_ = true;
  next_(stack_);
}

Tensor with_subclass(const Tensor& t, std::shared_ptr<TensorSubclass> handler) {
  OPSPEC_CHECK(t.defined(), "with_subclass: tensor is undefined");
  Tensor out = internal::make_view(t, t.sizes(), t.strides(), t.storage_offset());
  out.impl()->set_subclass(std::move(handler));
  return out;
}

void push_mode(std::shared_ptr<DispatchMode> mode) {
  OPSPEC_CHECK(mode != nullptr, "push_mode: mode is null");
  if (!uses_infra_slot(*mode)) {
    tls_modes.stacks[stack_index(mode->key())].push_back(std::move(mode));
  } else {
    auto& slot = infra_slot(mode->kind());
    OPSPEC_CHECK(!slot, "push_mode: a ", mode->kind() == ModeKind::kProxy ? "proxy" : "fake",
                 " mode (", slot->name(), ") is already active; use ModeGuard to nest infra modes");
    slot = std::move(mode);
  }
  refresh_mode_keys();
}

std::shared_ptr<DispatchMode> pop_mode(DispatchKey key) {
  auto& stack = tls_modes.stacks[stack_index(key)];
  OPSPEC_CHECK(!stack.empty(), "pop_mode: no mode on the ", dispatch_key_name(key), " stack");
  auto mode = std::move(stack.back());
  stack.pop_back();
  refresh_mode_keys();
  return mode;
}

std::vector<std::shared_ptr<DispatchMode>> mode_stack(DispatchKey key) {
  return tls_modes.stacks[stack_index(key)];
}

bool mode_stack_empty(DispatchKey key) { return tls_modes.stacks[stack_index(key)].empty(); }

DispatchMode* innermost_mode(DispatchKey key) {
  const auto& stack = tls_modes.stacks[stack_index(key)];
  return stack.empty() ? nullptr : stack.back().get();
}

std::shared_ptr<DispatchMode> infra_mode(ModeKind kind) { return infra_slot(kind); }

bool has_infra_mode(ModeKind kind) { return infra_slot(kind) != nullptr; }


// PyTorch's: a mode is set and the Python key is not excluded (inside an
// ExcludeModesGuard composites decompose as with no mode).
bool dispatch_mode_enabled() {
  const LocalDispatchKeySet& tls = local_dispatch_key_set();
  return tls.modes.has(DispatchKey::kPython) && !tls.excluded.has(DispatchKey::kPython);
}

namespace {
// The innermost live ModeGuard of each infra slot and the innermost live
// HideUserModesGuard on this thread; each links to the ones before it.
// See Note [Out-of-order guard release].
constinit thread_local internal::LiveLink<ModeGuard>* tls_innermost_infra_guard[2] = {nullptr, nullptr};
constinit thread_local internal::LiveLink<HideUserModesGuard>* tls_innermost_hide_guard = nullptr;

internal::LiveLink<ModeGuard>*& innermost_infra_guard(ModeKind kind) {
  return tls_innermost_infra_guard[kind == ModeKind::kProxy ? 0 : 1];
}
}  // namespace

ModeGuard::ModeGuard(std::shared_ptr<DispatchMode> mode) : mode_(std::move(mode)) {
  OPSPEC_CHECK(mode_ != nullptr, "ModeGuard: mode is null");
  if (uses_infra_slot(*mode_)) {
    previous_infra_ = std::exchange(infra_slot(mode_->kind()), nullptr);
    link_.emplace(this, innermost_infra_guard(mode_->kind()));
  }
  push_mode(mode_);
}

// A non-owning handle (the aliasing constructor with no owner): no control
// block to allocate, no count to touch; the caller keeps mode alive.
ModeGuard::ModeGuard(DispatchMode& mode) : ModeGuard(std::shared_ptr<DispatchMode>(std::shared_ptr<void>(), &mode)) {}

// Note [A guard ending inside its own handler]
// A handler runs with its mode taken off the stack (TemporarilyPopped), so a
// guard that ends inside it (a std::optional<ModeGuard> reset there) does not
// find its mode; the handler's end used to push the mode back, and a mode that
// lived on the C++ stack stayed there, dangling, to see the next op. So the
// guard tells the TemporarilyPopped that holds its mode, which then leaves it out.

ModeGuard::~ModeGuard() {
  if (uses_infra_slot(*mode_)) {
    // Its mode is out of the slot only while it handles a call (a guard of the
    // same mode re-entered in the handler finds its own entry in the slot).
    // See Note [A guard ending inside its own handler]. (Covered by an inner
    // guard, its mode is in that guard's saved slot, not out in a handler.)
    if (infra_slot(mode_->kind()) != mode_ && link_->inner() == nullptr) TemporarilyPopped::end(mode_.get());
    if (ModeGuard* inner = link_->inner(); inner == nullptr) {  // the innermost: what its mode replaced comes back
      infra_slot(mode_->kind()) = std::move(previous_infra_);
    } else {
      // Ended before the guard entered after it (whose mode stays in the slot):
      // that guard puts back what this one replaced, never this one's mode.
      inner->previous_infra_ = std::move(previous_infra_);
    }
    link_.reset();
  } else {
    // Scopes nest, so the mode is on top; erase it wherever it is to stay safe
    // if a user popped modes by hand in between, or if a HideUserModesGuard
    // hides it now: then it must not come back when that guard ends.
    const int index = stack_index(mode_->key());
    auto& stack = tls_modes.stacks[index];
    auto it = std::find(stack.rbegin(), stack.rend(), mode_);
    if (it != stack.rend()) {
      stack.erase(std::next(it).base());
    } else if (!TemporarilyPopped::end(mode_.get())) {  // See Note [A guard ending inside its own handler]
      for (HideUserModesGuard* h = internal::owner_of(tls_innermost_hide_guard); h != nullptr; h = h->link_.outer()) {
        std::erase_if(h->saved_[index], [&](const auto& s) { return s.hidden && s.mode == mode_; });
      }
    }
  }
  refresh_mode_keys();
}

HideUserModesGuard::HideUserModesGuard(DispatchKeySet keys) : link_(this, tls_innermost_hide_guard) {
  for (int i = 0; i < 3; ++i) {
    if (!keys.has(kModeKeys[i])) continue;  // saved_[i] empty: its stack is left as it is, now and at the end
    auto& stack = tls_modes.stacks[i];
    saved_[i].reserve(stack.size());
    for (const auto& m : stack) saved_[i].push_back({m, m->kind() == ModeKind::kUser});
    std::erase_if(stack, [](const auto& m) { return m->kind() == ModeKind::kUser; });
  }
  refresh_mode_keys();
}

HideUserModesGuard::~HideUserModesGuard() {
  // In nested (reverse) order the stacks are as it left them and this is a
  // plain restore. Otherwise: the saved modes still alive (hidden ones whose
  // guards have not ended, others still on the stack), then those pushed since.
  auto contains = [](const auto& list, const DispatchMode* m, auto mode_of) {
    return std::any_of(list.begin(), list.end(), [&](const auto& e) { return mode_of(e) == m; });
  };
  auto plain = [](const std::shared_ptr<DispatchMode>& m) { return m.get(); };
  auto saved = [](const Saved& s) { return s.mode.get(); };
  for (int i = 0; i < 3; ++i) {
    auto& stack = tls_modes.stacks[i];
    std::vector<std::shared_ptr<DispatchMode>> restored;
    restored.reserve(saved_[i].size() + stack.size());
    for (const Saved& s : saved_[i]) {
      if (s.hidden || contains(stack, s.mode.get(), plain)) restored.push_back(s.mode);
    }
    for (const auto& m : stack) {
      if (!contains(saved_[i], m.get(), saved)) restored.push_back(m);
    }
    stack = std::move(restored);
  }
  refresh_mode_keys();
}

namespace internal {

std::shared_ptr<DispatchMode> exchange_infra_mode(ModeKind kind, std::shared_ptr<DispatchMode> mode) {
  OPSPEC_CHECK(kind != ModeKind::kUser, "exchange_infra_mode: user modes have no slot");
  std::shared_ptr<DispatchMode> previous = std::exchange(infra_slot(kind), std::move(mode));
  refresh_mode_keys();
  return previous;
}

void register_mode_fallbacks(Dispatcher& d) {
  // A lambda, not &python_fallback: std::function's invoker then runs it
  // directly (one indirect call per mode call, not two).
  d.register_fallback(DispatchKey::kPython, KernelFunction::from_boxed(
                                                [](const OperatorHandle& op, DispatchKeySet ks, Stack& stack) {
                                                  python_fallback(op, ks, stack);
                                                },
                                                "python_mode_fallback"));
  for (DispatchKey key : {DispatchKey::kFunctionMode, DispatchKey::kPreDispatch}) {
    d.register_fallback(key, KernelFunction::from_boxed(
                                 [key](const OperatorHandle& op, DispatchKeySet ks, Stack& stack) {
                                   mode_stack_fallback(key, op, ks, stack);
                                 },
                                 str_cat(dispatch_key_name(key), "_mode_fallback")));
  }
}

}  // namespace internal
}  // namespace opspec
