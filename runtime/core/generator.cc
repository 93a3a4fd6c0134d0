#include "runtime/core/generator.h"

#include <mutex>

#include "runtime/core/philox.h"

namespace opspec {

namespace {
std::mutex g_mu;
GeneratorState g_state;
}  // namespace

std::array<uint32_t, 4> Philox4x32::block(uint64_t counter, uint64_t key) {
  const internal::philox::Block b = internal::philox::philox4x32_10(counter, key);
  return {b.w[0], b.w[1], b.w[2], b.w[3]};
}

void manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_state = {seed, 0};
}

GeneratorState default_generator_state() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_state;
}

void set_default_generator_state(GeneratorState s) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_state = s;
}

namespace internal {

GeneratorState reserve_random_offsets(uint64_t n) {
  std::lock_guard<std::mutex> lock(g_mu);
  const GeneratorState reserved = g_state;
  g_state.offset += n;
  return reserved;
}

// The transforms live in runtime/core/philox.h, shared with the CUDA kernels.
float uniform_float(uint64_t seed, uint64_t counter) { return philox::uniform_float(seed, counter); }
double uniform_double(uint64_t seed, uint64_t counter) { return philox::uniform_double(seed, counter); }
float normal_float(uint64_t seed, uint64_t counter) { return philox::normal_float(seed, counter); }
double normal_double(uint64_t seed, uint64_t counter) { return philox::normal_double(seed, counter); }

}  // namespace internal
}  // namespace opspec
