#include "runtime/core/generator.h"

#include <atomic>
#include <cmath>
#include <mutex>

namespace opspec {

namespace {
std::mutex g_mu;
GeneratorState g_state;

constexpr uint32_t kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;

inline void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  const uint64_t p = uint64_t{a} * b;
  hi = static_cast<uint32_t>(p >> 32);
  lo = static_cast<uint32_t>(p);
}
}  // namespace

std::array<uint32_t, 4> Philox4x32::block(uint64_t counter, uint64_t key) {
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo(kPhiloxM0, c0, hi0, lo0);
    mulhilo(kPhiloxM1, c2, hi1, lo1);
    const uint32_t n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
    c0 = n0;
    c1 = n1;
    c2 = n2;
    c3 = n3;
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  return {c0, c1, c2, c3};
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

// 24 / 53 random mantissa bits give uniform values in [0, 1).
float uniform_float(uint64_t seed, uint64_t counter) {
  const auto r = Philox4x32::block(counter, seed);
  return static_cast<float>(r[0] >> 8) * 0x1.0p-24f;
}

double uniform_double(uint64_t seed, uint64_t counter) {
  const auto r = Philox4x32::block(counter, seed);
  const uint64_t bits = (uint64_t{r[0]} << 32 | r[1]) >> 11;
  return static_cast<double>(bits) * 0x1.0p-53;
}

float normal_float(uint64_t seed, uint64_t counter) {
  return static_cast<float>(normal_double(seed, counter));
}

double normal_double(uint64_t seed, uint64_t counter) {
  const auto r = Philox4x32::block(counter, seed);
  // u1 in (0, 1] so log(u1) is finite; u2 in [0, 1).
  const double u1 = (static_cast<double>((uint64_t{r[0]} << 32 | r[1]) >> 11) + 1.0) * 0x1.0p-53;
  const double u2 = static_cast<double>((uint64_t{r[2]} << 32 | r[3]) >> 11) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

}  // namespace internal
}  // namespace opspec
