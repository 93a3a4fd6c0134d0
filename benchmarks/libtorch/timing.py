# timing.py: how the libtorch scripts beside it time a model, as
# benchmarks/README.md describes: no_grad, 3 warm-up calls, then the median
# of 30 calls in milliseconds, read with `clock` (time.perf_counter for wall
# time, time.thread_time for one thread's CPU time).
import statistics
import time

import torch


def add_timing_args(parser):
    """The scripts' shared options: --threads N and --cpu-time."""
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cpu-time", action="store_true")


def setup_timing(args):
    """Sets torch's threads from args; returns (clock, what it measures)."""
    torch.set_num_threads(args.threads)
    if args.cpu_time:
        return time.thread_time, "thread CPU time"
    return time.perf_counter, "wall clock"


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
