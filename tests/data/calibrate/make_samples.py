#!/usr/bin/python3
"""Write the synthetic sample measurements of this folder (README.md):
nccl-tests alltoall_perf tables and DeepEP test logs of an H200 cluster
(8 GPUs a server, NVLink, 400 Gb/s InfiniBand), in the formats those tools
print, with numbers of plausible hardware chosen here (not measured):

  alltoall_intra_h200.txt  1 x 8: time = 18 us + size x 7/8 / 340 GB/s
                           (NCCL in-node alltoall ~335 GB/s busbw on 4 x
                           H100: NVIDIA/nccl #2169)
  alltoall_2x8_h200.txt    2 x 8: time = 45 us + size x 8/16 / 46 GB/s
                           (half of a rank's bytes cross its NIC)
  deepep_intranode_h200.log  24 SMs: dispatch 165 GB/s (NVL), FP8 162,
                           combine 170 (DeepEP's README: 153 / 158 on H800)
  deepep_internode_h200_2x8.log  EP16: dispatch 43.2 GB/s (RDMA), FP8 42.0,
                           combine 41.0 (the README: 43 / 43; --combine-GBps
                           43 writes that: docs/calibrate.md says what the
                           model makes of it)

Each table row gets a deterministic wobble of up to +-1%.  The DeepEP
bandwidths are rank 0's bytes in the run `fast calibrate` regenerates
(`fast gen --preset h200 --servers S --pattern moe --token-groups`, seed
1: 4096 tokens, top-8 of 256 experts, 7168 x 2 bytes a token) over the
kernel time, as the tests print them.

  /usr/bin/python3 tests/data/calibrate/make_samples.py [--combine-GBps X] DIR
"""
import os
import sys


def wobble(i):
    return 1.0 + 0.01 * (((i * 37) % 21) - 10) / 10.0


def table(path, ranks, alpha_us, frac, GBps):
    lines = ["# nThread 1 nGpus 1 minBytes 1024 maxBytes 1073741824 step: 4(factor) "
             "warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
             "#",
             "# Using devices"]
    for r in range(ranks):
        lines.append("#  Rank %2d Group  0 Pid %5d on %8s device  %d [0x%02x] NVIDIA H200"
                     % (r, 4100 + r, "node%d" % (r // 8), r % 8, 0x18 + r % 8))
    lines += ["#",
              "#                                                              out-of-place"
              "                       in-place          ",
              "#       size         count      type   redop    root     time   algbw   busbw"
              " #wrong     time   algbw   busbw #wrong",
              "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
              "            (us)  (GB/s)  (GB/s)       "]
    size, i, busbws = 1024, 0, []
    while size <= 1 << 30:
        t = (alpha_us + size * frac / (GBps * 1e3)) * wobble(i)
        t2 = t * wobble(i + 5)
        algbw, algbw2 = size / t / 1e3, size / t2 / 1e3
        f = (ranks - 1) / ranks
        busbws.append(algbw * f)
        lines.append("%12d  %12d     float    none      -1  %7.2f  %6.2f  %6.2f      0  %7.2f"
                     "  %6.2f  %6.2f    N/A" % (size, size // 4, t, algbw, algbw * f, t2,
                                                  algbw2, algbw2 * f))
        size, i = size * 4, i + 1
    lines += ["# Out of bounds values : 0 OK",
              "# Avg bus bandwidth    : %.4f " % (sum(busbws) / len(busbws)), "#", ""]
    with open(path, "w") as fh:
        fh.write("\n".join(lines))


# rank 0's bytes in the regenerated runs (the docstring's `fast gen`):
INTRA_NVL = 313141248            # 21843 tokens received x 14336
INTER_NVL = 384534528            # 26823 tokens received x 14336
INTER_RDMA = 117010432           # 8162 (token, server) pairs x 14336
FP8 = 7392.0 / 14336.0           # 7168 + 7168 / 32 bytes a token


def intranode(path):
    d, f, c = INTRA_NVL / 165.0e3, INTRA_NVL * FP8 / 162.0e3, INTRA_NVL / 170.0e3
    lines = ["[config] num_tokens=4096, hidden=7168, num_topk=8",
             "[layout] Kernel performance: 0.041 ms", "",
             "[testing] Running with BF16, without top-k (async=False, previous=False) ... passed",
             "[testing] Running with FP8, with top-k (async=True, previous=True) ... passed", ""]
    for chunk in (4, 8, 12):
        t = f * (1.0 + 0.3 / chunk)
        lines.append("[tuning] SMs 24, NVL chunk %d: %.2f GB/s (NVL), %.2f us"
                     % (chunk, INTRA_NVL * FP8 / t / 1e3, t))
    lines.append("[tuning] Best dispatch (FP8): SMs 24, NVL chunk 12, %.2f GB/s (NVL), t: %.2f us"
                 % (INTRA_NVL * FP8 / f / 1e3, f))
    lines.append("")
    lines.append("[tuning] Best dispatch (BF16): SMs 24, NVL chunk 16, %.2f GB/s (NVL), t: %.2f us"
                 % (INTRA_NVL / d / 1e3, d))
    lines.append("")
    lines.append("[tuning] Best combine: SMs 24, NVL chunk 6: %.2f GB/s (NVL), t: %.2f us"
                 % (INTRA_NVL / c / 1e3, c))
    lines.append("")
    with open(path, "w") as fh:
        fh.write("\n".join(lines))


def internode(path, combine_GBps):
    d, f, c = INTER_RDMA / 43.2e3, INTER_RDMA * FP8 / 42.0e3, INTER_RDMA / (combine_GBps * 1e3)
    lines = ["[config] num_tokens=4096, hidden=7168, num_topk_groups=2, num_topk=8",
             "[layout] Kernel performance: 0.052 ms", "",
             "[testing] Running with BF16, with top-k (async=False, previous=False) ... passed", ""]
    row = ("[tuning] Best dispatch (%s): SMs 24, NVL chunk %d, RDMA chunk %d: %d + %d us, "
           "%.2f GB/s (RDMA), %.2f GB/s (NVL)")
    lines.append(row % ("FP8", 20, 16, 38, round(f), INTER_RDMA * FP8 / round(f) / 1e3,
                        INTER_NVL * FP8 / round(f) / 1e3))
    lines.append("")
    lines.append(row % ("BF16", 24, 16, 41, round(d), INTER_RDMA / round(d) / 1e3,
                        INTER_NVL / round(d) / 1e3))
    lines.append("")
    lines.append("[tuning] Best combine: SMs 24, NVL chunk 2, RDMA chunk 20, %.2f + %.2f us, "
                 "%.2f GB/s (RDMA), %.2f GB/s (NVL)" % (40.5, c, INTER_RDMA / c / 1e3,
                                                       INTER_NVL / c / 1e3))
    lines.append("")
    with open(path, "w") as fh:
        fh.write("\n".join(lines))


def main(out, combine_GBps):
    table(os.path.join(out, "alltoall_intra_h200.txt"), 8, 18.0, 7.0 / 8.0, 340.0)
    table(os.path.join(out, "alltoall_2x8_h200.txt"), 16, 45.0, 8.0 / 16.0, 46.0)
    intranode(os.path.join(out, "deepep_intranode_h200.log"))
    internode(os.path.join(out, "deepep_internode_h200_2x8.log"), combine_GBps)


if __name__ == "__main__":
    args = sys.argv[1:]
    rate = 41.0
    if args[:1] == ["--combine-GBps"]:
        rate, args = float(args[1]), args[2:]
    main(args[0] if args else os.path.dirname(os.path.abspath(__file__)), rate)
