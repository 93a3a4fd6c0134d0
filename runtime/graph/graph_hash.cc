// graph_hash.cc: Graph::structural_hash, a fingerprint of what a graph
// computes (ops, arguments, metadata, constant values, wiring) that ignores
// node names, so caches can key compiled graphs by it.
#include <bit>
#include <cstring>

#include <xxhash.h>

#include "runtime/core/error.h"
#include "runtime/graph/graph.h"

namespace opspec {
namespace {

// Serializer: a canonical byte string; every field is length- or
// kind-prefixed so that different graphs cannot serialize alike.
class Serializer {
 public:
  void u64(uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void str(std::string_view s) {
    u64(s.size());
    out_.append(s.data(), s.size());
  }
  void sizes(absl::Span<const int64_t> s) {
    u64(s.size());
    for (int64_t v : s) i64(v);
  }
  void meta(const OutputMeta& m) {
    u64(m.has_value());
    if (!m) return;
    sizes(m->sizes);
    sizes(m->strides);
    u64(static_cast<uint64_t>(m->dtype));
    u64(static_cast<uint64_t>(m->device.type));
    i64(m->device.index);
  }
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

// contiguous_bytes_hash: XXH3 of t's elements in row-major order (copying
// element by element when t is strided, so views hash like their values).
uint64_t contiguous_bytes_hash(const Tensor& t) {
  const size_t elem = static_cast<size_t>(t.element_size());
  if (t.is_contiguous()) return XXH3_64bits(t.raw_data(), static_cast<size_t>(t.numel()) * elem);
  std::string buf(static_cast<size_t>(t.numel()) * elem, '\0');
  const char* base = static_cast<const char*>(t.raw_data());
  const int64_t nd = t.dim();
  SizeVec idx(static_cast<size_t>(nd), 0);
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t off = 0;
    for (int64_t d = 0; d < nd; ++d) off += idx[d] * t.strides()[d];
    std::memcpy(buf.data() + static_cast<size_t>(i) * elem, base + off * static_cast<int64_t>(elem), elem);
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < t.sizes()[d]) break;
      idx[d] = 0;
    }
  }
  return XXH3_64bits(buf.data(), buf.size());
}

void serialize_value(Serializer& s, const Value& v) {
  s.str(v.type_name());
  if (v.is_tensor() && v.to_tensor().defined() && v.to_tensor().is_wrapped_number()) {
    // A wrapped number is a scalar: its dtype and value, not its identity.
    const Tensor& t = v.to_tensor();
    s.str("wrapped");
    s.u64(static_cast<uint64_t>(t.dtype()));
    const Value scalar(v.to_scalar());
    if (scalar.is_double()) s.u64(std::bit_cast<uint64_t>(scalar.to_double()));
    s.str(scalar.repr());
    return;
  }
  if (v.is_tensor() && v.to_tensor().defined()) {
    s.meta(TensorMeta::of(v.to_tensor()));
    return;
  }
  // repr is exact for everything but doubles; add their bits.
  if (v.is_double()) s.u64(std::bit_cast<uint64_t>(v.to_double()));
  s.str(v.repr());
}

}  // namespace

uint64_t Graph::structural_hash(bool include_metadata) const {
  absl::flat_hash_map<const Node*, int64_t> position;
  Serializer s;
  s.u64(nodes_.size());
  for (const auto& node : nodes_) {
    const Node& n = *node;
    const auto next_position = static_cast<int64_t>(position.size());
    position[&n] = next_position;
    s.u64(static_cast<uint64_t>(n.op()));
    s.str(n.target() ? std::string_view(n.target()->name()) : std::string_view());
    s.u64(n.args().size());
    for (const NodeArg& a : n.args()) {
      s.u64(a.is_value() ? 0 : a.is_node() ? 1 : 2);
      if (a.is_value()) {
        serialize_value(s, a.as_value());
        continue;
      }
      // References by position: names are for people only.
      // A None entry of a Tensor?[] list is a null node: position -1.
      const std::vector<Node*> ins = a.is_node() ? std::vector<Node*>{a.as_node()} : a.as_node_list();
      s.u64(ins.size());
      for (const Node* in : ins) s.i64(in == nullptr ? -1 : position.at(in));
    }
    s.i64(n.index());
    s.u64(n.meta().size());
    if (include_metadata) {
      for (const OutputMeta& m : n.meta()) s.meta(m);
    }
    if (n.op() == NodeOp::kConstant) {
      const Tensor& t = n.constant();
      // Fake and meta tensors have no data: their metadata is all there is.
      // Other devices' data is not readable from the host here.
      const bool host_data = t.impl()->storage()->device().is_cpu();
      s.u64(host_data);
      if (host_data) s.u64(contiguous_bytes_hash(t));
    }
  }
  return XXH3_64bits(s.bytes().data(), s.bytes().size());
}

}  // namespace opspec
