// benchmark_main.cc: the one main of opspec_benchmarks (every *_benchmark.cc
// registers into it).
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
