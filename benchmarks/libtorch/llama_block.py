#!/usr/bin/python3
# libtorch's figure for BM_Model/llama_block/eager: the Llama decoder layer of
# fixtures/llama_block.h (HF's LlamaDecoderLayer: width 256, 8 heads, 2
# key/value heads, MLP 688, rotary tables built once) on randn(4, 128, 256),
# as benchmarks/README.md times libtorch: Debian's torch 1.13, 2 threads,
# no_grad, the median of 30 calls after 3 warm-up calls. torch 1.13 has
# neither rms_norm nor scaled_dot_product_attention, so RMSNorm is PyTorch
# 2.x's decomposition written out (pow, mean, add_, rsqrt, mul, mul) and the
# causal attention is explicit (matmul, masked_fill of a triu mask made once,
# softmax, matmul), as the GPT-2 figure's. Run with /usr/bin/python3.
#   llama_block.py [--threads N] [--cpu-time]
# --ops prints the forward's aten ops (a TorchDispatchMode) at the spec's
# size (x [2, 8, 64]) instead of timing, for the op-sequence comparison in
# docs/pytorch-versions.md.
import argparse

import torch
from torch import nn

from timing import add_timing_args, median_ms, setup_timing


class RMSNorm(nn.Module):
    def __init__(self, width, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))
        self.eps = eps

    def forward(self, x):
        rstd = torch.rsqrt(x.pow(2).mean([x.dim() - 1], keepdim=True).add_(self.eps))
        return (x * rstd) * self.weight


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(h, n_rep):
    b, kv, s, d = h.shape
    if n_rep == 1:
        return h
    h = h[:, :, None, :, :].expand(b, kv, n_rep, s, d)
    return h.reshape(b, kv * n_rep, s, d)


class LlamaAttention(nn.Module):
    def __init__(self, width, heads, kv_heads, max_seq, theta=10000.0):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, width // heads
        self.scaling = self.head_dim**-0.5
        self.q_proj = nn.Linear(width, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(width, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(width, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, width, bias=False)
        inv_freq = 1.0 / (theta ** (torch.arange(0, self.head_dim, 2, dtype=torch.int64).float() / self.head_dim))
        t = torch.arange(max_seq, dtype=torch.int64).float()
        freqs = torch.outer(t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.cos, self.sin = emb.cos(), emb.sin()
        self.mask = torch.ones(max_seq, max_seq, dtype=torch.bool).triu(1)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, -1, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, t, -1, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, -1, self.head_dim).transpose(1, 2)
        cos, sin = self.cos[:t], self.sin[:t]
        q = (q * cos) + (rotate_half(q) * sin)
        k = (k * cos) + (rotate_half(k) * sin)
        k = repeat_kv(k, self.heads // self.kv_heads)
        v = repeat_kv(v, self.heads // self.kv_heads)
        att = (q @ k.transpose(-2, -1)) * self.scaling
        att = att.masked_fill(self.mask[:t, :t], float("-inf"))
        y = torch.softmax(att, -1) @ v
        y = y.transpose(1, 2).contiguous().reshape(b, t, -1).contiguous()
        return self.o_proj(y)


class LlamaMLP(nn.Module):
    def __init__(self, width, mlp):
        super().__init__()
        self.gate_proj = nn.Linear(width, mlp, bias=False)
        self.up_proj = nn.Linear(width, mlp, bias=False)
        self.down_proj = nn.Linear(mlp, width, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, width=256, heads=8, kv_heads=2, mlp=688, max_seq=128, eps=1e-6):
        super().__init__()
        self.self_attn = LlamaAttention(width, heads, kv_heads, max_seq)
        self.mlp = LlamaMLP(width, mlp)
        self.input_layernorm = RMSNorm(width, eps)
        self.post_attention_layernorm = RMSNorm(width, eps)

    def forward(self, x):
        h = x + self.self_attn(self.input_layernorm(x))
        return h + self.mlp(self.post_attention_layernorm(h))


def print_ops():
    from torch.utils._python_dispatch import TorchDispatchMode

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = func.overloadpacket.__name__
            print(f"aten::{name}" + ("" if func._overloadname == "default" else f".{func._overloadname}"))
            return func(*args, **(kwargs or {}))

    model = LlamaDecoderLayer(width=64, heads=8, kv_heads=2, mlp=172, max_seq=8)
    x = torch.randn(2, 8, 64)
    with torch.no_grad(), Log():
        model(x)


def main():
    parser = argparse.ArgumentParser()
    add_timing_args(parser)
    parser.add_argument("--ops", action="store_true")
    args = parser.parse_args()
    torch.manual_seed(0)
    if args.ops:
        print_ops()
        return
    clock, what = setup_timing(args)
    x = torch.randn(4, 128, 256)
    model = LlamaDecoderLayer()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"llama_block: {median_ms(model, x, clock):.2f} ms ({what}, median of 30)")


if __name__ == "__main__":
    main()
