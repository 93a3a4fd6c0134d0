// ProxyTensorMode's tensor -> producer records (Note [Trace slots]): found
// until forget(), kept apart between tracers that see the same tensor (nested,
// finished, or on other threads), and remapped as a whole.
#include "runtime/trace/proxy_tensor.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "runtime/ops/ops.h"

namespace opspec {
namespace proxy_tensor_test {

// Tracer: a ProxyTensorMode with remap_nodes reachable from tests.
class Tracer : public ProxyTensorMode {
 public:
  explicit Tracer(Graph& g) : ProxyTensorMode(g, DispatchKey::kPython) {}
  using ProxyTensorMode::release_slot;
  using ProxyTensorMode::remap_nodes;
  using ProxyTensorMode::track_new;
};

Node* placeholder(Graph& g, const char* name, const Tensor& t) { return g.add_placeholder(name, TensorMeta::of(t)); }

TEST(ProxyTensorModeTest, ATrackedTensorIsFoundUntilForget) {
  Graph g;
  Tracer tracer(g);
  const Tensor t = ops::ones({2});
  const Tensor other = ops::ones({2});
  Node* a = placeholder(g, "a", t);
  Node* b = placeholder(g, "b", t);
  EXPECT_EQ(tracer.node_of(t), nullptr);
  tracer.track(t, a);
  EXPECT_EQ(tracer.node_of(t), a);
  EXPECT_EQ(tracer.node_of(other), nullptr);
  tracer.track(t, b);  // a later producer (an in-place op) replaces the record
  EXPECT_EQ(tracer.node_of(t), b);
  tracer.forget();
  EXPECT_EQ(tracer.node_of(t), nullptr);
  tracer.track(t, a);  // its slot is stale now: tracked again all the same
  EXPECT_EQ(tracer.node_of(t), a);
}

TEST(ProxyTensorModeTest, NestedTracersKeepTheirOwnRecordsOfOneTensor) {
  Graph outer_graph, inner_graph;
  Tracer outer(outer_graph);
  Tracer inner(inner_graph);
  const Tensor t = ops::ones({3});
  const Tensor inner_only = ops::ones({3});
  Node* o = placeholder(outer_graph, "o", t);
  Node* i = placeholder(inner_graph, "i", t);
  Node* j = placeholder(inner_graph, "j", inner_only);
  outer.track(t, o);  // the outer tracer claims the slot; the inner one keeps its own record
  inner.track(inner_only, j);
  inner.track(t, i);
  EXPECT_EQ(outer.node_of(t), o);
  EXPECT_EQ(inner.node_of(t), i);
  EXPECT_EQ(inner.node_of(inner_only), j);
  EXPECT_EQ(outer.node_of(inner_only), nullptr);
  inner.forget();
  EXPECT_EQ(inner.node_of(t), nullptr);
  EXPECT_EQ(outer.node_of(t), o);
}

TEST(ProxyTensorModeTest, ATensorAFinishedTracerClaimedIsTrackedByTheNext) {
  const Tensor t = ops::ones({2});
  {
    Graph g;
    Tracer first(g);
    first.track(t, placeholder(g, "first", t));
  }
  Graph g;
  Tracer second(g);
  EXPECT_EQ(second.node_of(t), nullptr);
  Node* p = placeholder(g, "second", t);
  second.track(t, p);
  EXPECT_EQ(second.node_of(t), p);
}

TEST(ProxyTensorModeTest, TrackNewClaimsAFreeSlotAndLeavesAnOwnedOneAlone) {
  Graph g;
  Tracer owner(g);
  Tracer tracer(g);
  const Tensor fresh = ops::ones({2});
  const Tensor owned = ops::ones({2});
  Node* a = placeholder(g, "a", fresh);
  Node* b = placeholder(g, "b", owned);
  Node* c = placeholder(g, "c", owned);
  owner.track(owned, c);
  tracer.track_new(fresh, a);
  tracer.track_new(owned, b);  // another tracer's slot: recorded in the map instead
  EXPECT_EQ(tracer.node_of(fresh), a);
  EXPECT_EQ(tracer.node_of(owned), b);
  EXPECT_EQ(owner.node_of(owned), c);
  EXPECT_EQ(owner.node_of(fresh), nullptr);
}

TEST(ProxyTensorModeTest, RemapMovesEveryRecord) {
  Graph g;
  Tracer tracer(g);
  Tracer other(g);
  const Tensor mine = ops::ones({1});
  const Tensor shared = ops::ones({1});
  Node* a = placeholder(g, "a", mine);
  Node* b = placeholder(g, "b", mine);
  Node* c = placeholder(g, "c", mine);
  other.track(shared, c);   // its slot is other's, so tracer records it in its map
  tracer.track(mine, a);    // in a slot
  tracer.track(shared, a);
  tracer.remap_nodes([&](Node* n) { return n == a ? b : n; });
  EXPECT_EQ(tracer.node_of(mine), b);
  EXPECT_EQ(tracer.node_of(shared), b);
  EXPECT_EQ(other.node_of(shared), c);
}

TEST(ProxyTensorModeTest, ThreadsTracingOneTensorEachSeeTheirOwnRecord) {
  const Tensor shared = ops::ones({4});
  constexpr int kThreads = 4;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; ++k) {
    threads.emplace_back([&, k] {
      for (int round = 0; round < 200; ++round) {
        Graph g;
        Tracer tracer(g);
        Node* p = placeholder(g, "x", shared);
        tracer.track(shared, p);
        const Tensor fresh = ops::ones({1});
        Node* q = placeholder(g, "y", fresh);
        tracer.track(fresh, q);
        if (tracer.node_of(shared) != p || tracer.node_of(fresh) != q) ++mismatches[k];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int k = 0; k < kThreads; ++k) EXPECT_EQ(mismatches[k], 0) << "thread " << k;
}

TEST(ProxyTensorModeTest, AReleasedSlotIsClaimedByTheNextTracer) {
  Graph g1, g2;
  Tracer first(g1), second(g2);
  const Tensor t = ops::ones({2});
  Node* a = placeholder(g1, "a", t);
  Node* b = placeholder(g2, "b", t);
  first.track(t, a);
  const uint64_t first_owner = t.impl()->trace_owner().load();
  EXPECT_NE(first_owner, 0u);
  second.release_slot(t);  // not its slot: nothing changes
  EXPECT_EQ(t.impl()->trace_owner().load(), first_owner);
  first.release_slot(t);
  EXPECT_EQ(t.impl()->trace_owner().load(), 0u);
  first.forget();
  second.track(t, b);
  const uint64_t second_owner = t.impl()->trace_owner().load();
  EXPECT_NE(second_owner, 0u);
  EXPECT_NE(second_owner, first_owner);  // claimed, not kept on the map
  EXPECT_EQ(second.node_of(t), b);
  EXPECT_EQ(first.node_of(t), nullptr);
}

}  // namespace
}  // namespace opspec
