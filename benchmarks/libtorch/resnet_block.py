#!/usr/bin/python3
# libtorch's figure for BM_Model/resnet_block{,_channels_last}/eager: the
# model of fixtures/resnet_block.h (torchvision's BasicBlock(64), then
# MaxPool2d(3, 2, 1), AdaptiveAvgPool2d(1), flatten, Linear(64, 10)) in
# training mode on randn(8, 64, 56, 56), as benchmarks/README.md times
# libtorch: Debian's torch 1.13, 2 threads, no_grad, the median of 30 calls
# after 3 warm-up calls. Run with /usr/bin/python3 (it has torch 1.13).
#   resnet_block.py [--threads N] [--cpu-time] [LAYOUT...]
# --cpu-time times the calling thread's CPU time instead of the wall clock:
# with --threads 1 the work itself, whatever else loads a shared machine
# (as Google Benchmark's CPU column for opspec at OMP_NUM_THREADS=1).
import argparse

import torch
from torch import nn

from timing import add_timing_args, median_ms, setup_timing


class BasicBlock(nn.Module):
    def __init__(self, planes):
        super().__init__()
        self.conv1 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)

    def forward(self, x):
        out = torch.relu_(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += x
        return torch.relu_(out)


class ResNetBlock(nn.Module):
    def __init__(self, channels, classes=10):
        super().__init__()
        self.layer1 = BasicBlock(channels)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(channels, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.avgpool(self.maxpool(self.layer1(x))), 1))


def main():
    parser = argparse.ArgumentParser()
    add_timing_args(parser)
    parser.add_argument("layouts", nargs="*")
    args = parser.parse_args()
    clock, what = setup_timing(args)
    torch.manual_seed(0)
    x = torch.randn(8, 64, 56, 56)
    model = ResNetBlock(64)  # training mode, as the benchmark's
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, mkldnn {torch.backends.mkldnn.is_available()}")
    # channels_last: input and weights (PyTorch's recipe, model.to(memory_format=...));
    # channels_last_input: the input only, as BM_Model/resnet_block_channels_last.
    layouts = args.layouts or ["contiguous", "channels_last", "channels_last_input"]
    for layout in layouts:
        m, xi = model, x
        if layout.startswith("channels_last"):
            xi = x.contiguous(memory_format=torch.channels_last)
        if layout == "channels_last":
            m = ResNetBlock(64).to(memory_format=torch.channels_last)
            m.load_state_dict(model.state_dict())
        print(f"resnet_block {layout}: {median_ms(m, xi, clock):.1f} ms ({what}, median of 30)")


if __name__ == "__main__":
    main()
