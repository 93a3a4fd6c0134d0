// intrusive_ptr.h: IntrusivePtr<T>, a shared pointer whose count lives in T.
// Tensors are copied on every op; one atomic in the object (rather than a
// separate control block) keeps that copy to one increment. Creation and the
// last release skip the locked instructions (no other owner can exist then).
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace opspec {

// RefCounted: base for objects held by IntrusivePtr.
class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  virtual ~RefCounted() = default;

  // use_count: current number of owners (for tests and debugging).
  int64_t use_count() const { return refcount_.load(std::memory_order_relaxed); }

 private:
  template <class T> friend class IntrusivePtr;
  mutable std::atomic<int64_t> refcount_{0};
};

// IntrusivePtr: owning pointer to a RefCounted object.
template <class T>
class IntrusivePtr {
 public:
  IntrusivePtr() = default;
  explicit IntrusivePtr(T* p) : p_(p) { retain(); }
  IntrusivePtr(const IntrusivePtr& o) : p_(o.p_) { retain(); }
  IntrusivePtr(IntrusivePtr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  template <class U>
  IntrusivePtr(IntrusivePtr<U> o) : p_(o.release()) {}  // NOLINT: upcast
  ~IntrusivePtr() { reset(); }

  IntrusivePtr& operator=(const IntrusivePtr& o) {
    IntrusivePtr(o).swap(*this);
    return *this;
  }
  IntrusivePtr& operator=(IntrusivePtr&& o) noexcept {
    IntrusivePtr(std::move(o)).swap(*this);
    return *this;
  }

  template <class... Args>
  static IntrusivePtr make(Args&&... args) {
    return adopt_unowned(new T(std::forward<Args>(args)...));
  }
  // adopt_unowned: owns p, which nothing references (new, or handed back by
  // T::release_last): no other thread can see it, so its count is set plainly.
  static IntrusivePtr adopt_unowned(T* p) {
    p->refcount_.store(1, std::memory_order_relaxed);
    IntrusivePtr out;
    out.p_ = p;
    return out;
  }

  // share_unpublished: another owner of p, which only this thread can reach
  // (just made, no reference handed out yet): the count goes up with a plain
  // store, as in make, not a locked increment.
  static IntrusivePtr share_unpublished(T* p) {
    p->refcount_.store(p->refcount_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    IntrusivePtr out;
    out.p_ = p;
    return out;
  }

  // borrow: a handle on p that took no count, for a holder that never lets
  // it be destroyed or reset (a union member whose destructor never runs):
  // a borrower that knows another owner outlives it.
  static IntrusivePtr borrow(T* p) {
    IntrusivePtr out;
    out.p_ = p;
    return out;
  }

  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  void swap(IntrusivePtr& o) noexcept { std::swap(p_, o.p_); }

  void reset() {
    // The last owner (count 1: no other reference exists to copy from) deletes
    // without the locked decrement; acquire pairs with the other owners' releases.
    if (p_ && (p_->refcount_.load(std::memory_order_acquire) == 1 ||
               p_->refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1)) {
      // A class may keep its dead objects for reuse (TensorImpl::release_last).
      if constexpr (requires(T* q) { T::release_last(q); }) {
        T::release_last(p_);
      } else {
        delete p_;
      }
    }
    p_ = nullptr;
  }
  // release: gives up ownership without decrementing (for upcasts).
  T* release() { return std::exchange(p_, nullptr); }

  friend bool operator==(const IntrusivePtr& a, const IntrusivePtr& b) { return a.p_ == b.p_; }

 private:
  void retain() {
    if (p_) p_->refcount_.fetch_add(1, std::memory_order_relaxed);
  }
  T* p_ = nullptr;
};

}  // namespace opspec
