// live_guards.h: the chain of live guards of one slot, so that RAII guards
// that save a value and put it back stay right when they end out of order.
#pragma once

namespace opspec::internal {

// Note [Out-of-order guard release]
// c10's guards restore the exact value they saved, which is right only when
// guards end in reverse order. Ended out of order (two std::optional guards
// reset first-in first-out), that leaks state: the later guard puts back a
// value that holds the earlier guard's change, for the rest of the thread,
// or a pointer to something already gone. Two remedies:
// - Key guards (runtime/dispatch/local_dispatch_key_set.h) take out only the
//   keys they added: in reverse order that is the same as restoring, and out
//   of order nothing is left behind.
// - Guards of a value slot (ModeGuard's infra modes, HideUserModesGuard,
//   SiteLabelScope, AutoGradMode, NumThreadsGuard, ScopedOverride) keep
//   their live guards in a LiveLink chain. The innermost live guard owns the
//   slot: when it ends it restores what it saved. A guard that ends while
//   one entered after it is alive changes nothing now and hands what it
//   saved to that guard, which will restore it.

// LiveLink<Guard>: a guard's place in the chain of live guards of one slot,
// entered-first outermost. Constructing it links the guard in as the
// innermost; destroying it unlinks it wherever it is. The chain's innermost
// link is kept by the slot (a thread-local for thread state; a global under
// the guard's own lock for process state). See Note [Out-of-order guard release].
template <class Guard>
class LiveLink {
 public:
  LiveLink(Guard* owner, LiveLink*& innermost) : owner_(owner), innermost_(&innermost), outer_(innermost) {
    if (outer_ != nullptr) outer_->inner_ = this;
    innermost = this;
  }
  ~LiveLink() {
    if (inner_ == nullptr) {
      *innermost_ = outer_;
    } else {
      inner_->outer_ = outer_;
    }
    if (outer_ != nullptr) outer_->inner_ = inner_;
  }
  LiveLink(const LiveLink&) = delete;
  LiveLink& operator=(const LiveLink&) = delete;

  Guard* owner() const { return owner_; }
  // inner: the live guard entered after this one, or null: this is the
  // innermost (it owns the slot). The guard that inherits a saved value.
  Guard* inner() const { return inner_ != nullptr ? inner_->owner_ : nullptr; }
  // outer: the live guard entered before this one, or null.
  Guard* outer() const { return outer_ != nullptr ? outer_->owner_ : nullptr; }

 private:
  Guard* owner_;
  LiveLink** innermost_;
  LiveLink* outer_;
  LiveLink* inner_ = nullptr;
};

// owner_of: the guard of a chain's innermost link, or null for an empty chain.
template <class Guard>
Guard* owner_of(const LiveLink<Guard>* innermost) {
  return innermost != nullptr ? innermost->owner() : nullptr;
}

}  // namespace opspec::internal
