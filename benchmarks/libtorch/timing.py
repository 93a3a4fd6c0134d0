# timing.py: how the libtorch scripts beside it time a model, as
# benchmarks/README.md describes: no_grad, 3 warm-up calls, then the median
# of 30 calls in milliseconds, read with `clock` (time.perf_counter for wall
# time, time.thread_time for one thread's CPU time).
import statistics

import torch


def median_ms(model, x, clock, calls=30):
    with torch.no_grad():
        for _ in range(3):
            model(x)
        times = []
        for _ in range(calls):
            t0 = clock()
            model(x)
            times.append((clock() - t0) * 1e3)
    return statistics.median(times)
