// dispatch_key.h: DispatchKey and DispatchKeySet, the ordered keys every op
// call is routed by. See Note [Dispatch key order].
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/core/device.h"

namespace opspec {

// Note [Dispatch key order]
// Keys are bits in a 16-bit set; a higher bit has higher priority. An op call
// goes to the highest key that is (a) in the tensors' keys, the default-on keys
// or the thread's included set, (b) not in the thread's excluded set, and (c)
// has a kernel or a fallback for that op. Keys without either are fallthrough.
//   PythonDispatcher   switch of the override layer (Note [Override layer]):
//                      while included, run-time (op, key) kernels replace built-ins
//   PreDispatch        capture above decompositions (make_fx pre_dispatch)
//   FunctionMode       function modes: see `linear`, `matmul` as called
//   Autograd           records the graph for backward (runtime/autograd); only
//                      tensors that require grad carry it
//   CompositeImplicit  decompositions of composite ops into aten ops
//   Python             dispatch modes and tensor subclasses (C++ objects here;
//                      the name is PyTorch's)
//   BackendSelect      factories pick the backend from their device argument
//   Fake, Meta, CUDA, CPU   backends: Fake is the fake tensors' (Note [Fake tensors])
// The list mirrors c10's order, restricted to what opspec needs. As in c10,
// CUDA outranks CPU, so a 0-dim cpu tensor (a scalar) combined with a cuda
// tensor reaches the CUDA kernel, which accepts it.
enum class DispatchKey : uint8_t {
  kCPU = 0,
  kCUDA,
  kMeta,
  kFake,
  kBackendSelect,
  kPython,
  kCompositeImplicit,
  kAutograd,
  kFunctionMode,
  kPreDispatch,
  kPythonDispatcher,
};

// kNumDispatchKeys: how many keys there are.
inline constexpr int kNumDispatchKeys = 11;

// dispatch_key_name: "CPU", "CompositeImplicit", ...
std::string_view dispatch_key_name(DispatchKey k);

// parse_dispatch_key: the inverse of dispatch_key_name; throws opspec::Error if unknown.
DispatchKey parse_dispatch_key(std::string_view name);

// DispatchKeySet: a set of keys, iterated highest priority first.
class DispatchKeySet {
 public:
  constexpr DispatchKeySet() = default;
  constexpr DispatchKeySet(DispatchKey k) : bits_(uint16_t(1u << static_cast<int>(k))) {}  // NOLINT
  constexpr DispatchKeySet(std::initializer_list<DispatchKey> ks) {
    for (auto k : ks) bits_ |= uint16_t(1u << static_cast<int>(k));
  }
  static constexpr DispatchKeySet from_bits(uint16_t bits) {
    DispatchKeySet s;
    s.bits_ = bits;
    return s;
  }
  // below: every key with lower priority than k.
  static constexpr DispatchKeySet below(DispatchKey k) {
    return from_bits(uint16_t((1u << static_cast<int>(k)) - 1));
  }

  constexpr uint16_t bits() const { return bits_; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr bool has(DispatchKey k) const { return bits_ & (1u << static_cast<int>(k)); }
  // highest: the highest-priority key; undefined on an empty set.
  constexpr DispatchKey highest() const {
    return static_cast<DispatchKey>(15 - std::countl_zero(bits_));
  }
  constexpr DispatchKeySet add(DispatchKey k) const { return *this | DispatchKeySet(k); }
  constexpr DispatchKeySet remove(DispatchKey k) const { return *this - DispatchKeySet(k); }

  constexpr friend DispatchKeySet operator|(DispatchKeySet a, DispatchKeySet b) { return from_bits(a.bits_ | b.bits_); }
  constexpr friend DispatchKeySet operator&(DispatchKeySet a, DispatchKeySet b) { return from_bits(a.bits_ & b.bits_); }
  constexpr friend DispatchKeySet operator-(DispatchKeySet a, DispatchKeySet b) { return from_bits(a.bits_ & ~b.bits_); }
  constexpr friend bool operator==(DispatchKeySet a, DispatchKeySet b) { return a.bits_ == b.bits_; }

  // str: "DispatchKeySet(Python, CPU)", highest first.
  std::string str() const;

 private:
  uint16_t bits_ = 0;
};

// backend_key: the backend dispatch key of a device type.
constexpr DispatchKey backend_key(DeviceType t) {
  switch (t) {
    case DeviceType::kCPU: return DispatchKey::kCPU;
    case DeviceType::kMeta: return DispatchKey::kMeta;
    case DeviceType::kCUDA: return DispatchKey::kCUDA;
  }
  return DispatchKey::kCPU;
}

// kBackendKeys: Fake, Meta, CPU, CUDA.
inline constexpr DispatchKeySet kBackendKeys{DispatchKey::kFake, DispatchKey::kMeta, DispatchKey::kCPU,
                                             DispatchKey::kCUDA};

// kDefaultOnKeys: keys every call passes through unless excluded; they act only
// for ops that have a kernel there (composites, factories).
// Autograd is not one: only tensors that require grad carry it (See Note
// [Autograd meta]), so calls on plain tensors never reach its kernel.
inline constexpr DispatchKeySet kDefaultOnKeys{DispatchKey::kCompositeImplicit, DispatchKey::kBackendSelect};

}  // namespace opspec
