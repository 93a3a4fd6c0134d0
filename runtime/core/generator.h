// generator.h: the counter-based random generator behind rand, randn,
// bernoulli_ and dropout. Element i of a call depends only on (seed, offset
// of the call, i), so values do not depend on device, thread count, or eager
// versus compiled execution. See Note [Counter-based randomness].
#pragma once

#include <array>
#include <cstdint>

namespace opspec {

// Note [Counter-based randomness]
// Each random op reserves a range of the generator's 64-bit offset (one
// counter per element) and computes element i from Philox4x32-10 at counter
// offset+i with the seed as key. Reserving is the only state change, so any
// backend (and any parallel split) produces the same values.

// Philox4x32: the Philox 4x32-10 block function (Salmon et al., SC'11).
struct Philox4x32 {
  static std::array<uint32_t, 4> block(uint64_t counter, uint64_t key);
};

// GeneratorState: seed and next unused offset.
struct GeneratorState {
  uint64_t seed = 0;
  uint64_t offset = 0;
};

// manual_seed: resets the default generator to seed (offset 0), like torch.manual_seed.
void manual_seed(uint64_t seed);
// default_generator_state: the current seed and offset.
GeneratorState default_generator_state();
// set_default_generator_state: restores a saved state (for replaying a run).
void set_default_generator_state(GeneratorState s);

namespace internal {
// reserve_random_offsets: takes n counters; returns the seed and the first
// counter, read under one lock so a concurrent manual_seed cannot split them.
GeneratorState reserve_random_offsets(uint64_t n);

// uniform_float / uniform_double: element i of a uniform [0, 1) draw.
float uniform_float(uint64_t seed, uint64_t counter);
double uniform_double(uint64_t seed, uint64_t counter);
// normal_float / normal_double: element i of a standard normal draw (Box-Muller).
float normal_float(uint64_t seed, uint64_t counter);
double normal_double(uint64_t seed, uint64_t counter);
}  // namespace internal

}  // namespace opspec
