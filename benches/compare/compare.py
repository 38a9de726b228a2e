#!/usr/bin/env python3
"""Side-by-side timing of symshape, NumPy and PyTorch copying the same views.

Each workload is copied into a preallocated contiguous buffer by symshape (the
`symshape-compare` binary built from benches/src/bin/compare.rs), by NumPy (`np.copyto`)
and by PyTorch (`out.copy_(view)`). Before any timing, each output is compared element by
element with NumPy's (symshape's through a file the binary writes); a mismatch marks the row
WRONG and the script exits with status 1.

Usage:
    python3 compare.py --bin PATH/symshape-compare [--threads N] [--runs R] [--only A,B]
                       [--gap-us G]

`--threads N` sets symshape's rayon pool (`--threads` of the binary, and
RAYON_NUM_THREADS), PyTorch's intra-op threads (`torch.set_num_threads`) and
OMP/MKL/OpenBLAS threads (set before NumPy and PyTorch are imported; NumPy copies run on one
thread whatever they say). Each implementation's time is the median of R timed runs after
one untimed run (the checked one). Needs only python3 with numpy and torch, and the binary:
no Rust toolchain, no network. `cargo xtask compare` builds the binary and a virtual
environment and runs this script.
"""

import argparse
import gc
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", required=True, help="path of the symshape-compare binary")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                   help="threads for all three (default: every logical CPU)")
    p.add_argument("--runs", type=int, default=11, help="timed runs of each (median taken)")
    p.add_argument("--only", default="", help="comma-separated workload names (default: all)")
    p.add_argument("--gap-us", type=int, default=0,
                   help="microseconds slept before each timed run of all three (default 0: back to back)")
    args = p.parse_args()
    if args.threads < 1 or args.runs < 1:
        p.error("--threads and --runs take positive integers")
    if args.gap_us < 0:
        p.error("--gap-us takes a whole number")
    return args


ARGS = parse_args()
for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ[var] = str(ARGS.threads)

import numpy as np  # noqa: E402  (after the thread variables are set)
import torch  # noqa: E402

torch.set_num_threads(ARGS.threads)

N = 4096


def ramp(n):
    """0, 1, 2, ... as float32, exact below 2^24 (every source here is at most 2^24 long)."""
    return np.arange(n, dtype=np.int64).astype(np.float32)


def zeros_on_a_line(shape):
    """np.zeros(shape, float32) starting on a 64-byte line, as PyTorch's allocator places
    `torch.zeros` and the symshape binary its destination (`np.zeros` here starts 16 or 48
    bytes past one): every implementation writes a destination placed alike."""
    n = int(np.prod(shape))
    buf = np.zeros(n + 16, np.float32)
    lead = (-buf.ctypes.data % 64) // 4
    return buf[lead:lead + n].reshape(shape)


def causal_row(s, length):
    """The buffer of the causal mask: `ramp(length)`, then `s - 1` minus infinities."""
    z = np.full(length + s - 1, -np.inf, np.float32)
    z[:length] = ramp(length)
    return z


def numpy_workloads():
    """Name -> setup() returning (run, out): `run()` writes `out` in full."""
    w = {}

    def copy_of(make_src, shape):
        def setup():
            src = make_src()
            out = zeros_on_a_line(shape)
            return (lambda: np.copyto(out, src)), out
        return setup

    square = lambda: ramp(N * N).reshape(N, N)  # noqa: E731
    cube = lambda: ramp(256 ** 3).reshape(256, 256, 256)  # noqa: E731
    w["contiguous_4096x4096"] = copy_of(square, (N, N))
    w["transpose_4096x4096"] = copy_of(lambda: square().T, (N, N))
    for p in ("021", "102", "120", "201", "210"):
        axes = tuple(int(c) for c in p)
        w["permute_256x256x256_" + p] = copy_of(lambda axes=axes: cube().transpose(axes), (256,) * 3)

    def pad():
        a = ramp((N - 2) ** 2).reshape(N - 2, N - 2)
        out = zeros_on_a_line((N, N))
        inner, edges = out[1:-1, 1:-1], [out[0], out[-1], out[1:-1, 0], out[1:-1, -1]]

        def run():
            for e in edges:
                e.fill(0)
            np.copyto(inner, a)
        return run, out
    w["pad_4094_to_4096"] = pad
    w["every_2nd_column_4096x4096"] = copy_of(lambda: square()[:, ::2], (N, N // 2))
    w["broadcast_4096x1_to_4096x4096"] = copy_of(
        lambda: np.broadcast_to(ramp(N).reshape(N, 1), (N, N)), (N, N))

    def merge_heads():
        h = ramp(8 * 12 * 512 * 64).reshape(8, 12, 512, 64)
        out = zeros_on_a_line((8, 512, 768))
        ov, hv = out.reshape(8, 512, 12, 64), h.transpose(0, 2, 1, 3)
        return (lambda: np.copyto(ov, hv)), out
    w["merge_heads_8x12x512x64"] = merge_heads

    def kv_cache_write():
        x = ramp(8 * 512 * 768).reshape(8, 512, 768)
        cache = zeros_on_a_line((8, 12, 512, 64))
        cv, xv = cache.transpose(0, 2, 1, 3), x.reshape(8, 512, 12, 64)
        return (lambda: np.copyto(cv, xv)), cache
    w["kv_cache_write_8x512x768"] = kv_cache_write

    def im2col():
        # NumPy has no padded view: pad into a scratch buffer, then copy its windows.
        x = ramp(8 * 512 * 768).reshape(8, 512, 768)
        xp = zeros_on_a_line((8, 768, 515))
        out = zeros_on_a_line((8, 768, 512, 4))
        head, body = xp[:, :, :3], xp[:, :, 3:]
        xt = x.transpose(0, 2, 1)
        windows = np.lib.stride_tricks.sliding_window_view(xp, 4, axis=2)

        def run():
            head.fill(0)
            np.copyto(body, xt)
            np.copyto(out, windows)
        return run, out
    w["im2col_pad3_8x768x512x4"] = im2col

    def causal_mask():
        # Row i is the window at s - 1 - i of the buffer followed by minus infinity.
        s, length = 512, 640
        view = np.lib.stride_tricks.sliding_window_view(causal_row(s, length), length)[::-1]
        out = zeros_on_a_line((s, length))
        return (lambda: np.copyto(out, view)), out
    w["causal_mask_s512_p128"] = causal_mask
    return w


def torch_workloads():
    """As numpy_workloads, with PyTorch tensors; `out` is a tensor."""
    w = {}
    t = lambda a: torch.from_numpy(a)  # noqa: E731

    def copy_of(make_src, shape):
        def setup():
            src = make_src()
            out = torch.zeros(shape, dtype=torch.float32)
            return (lambda: out.copy_(src)), out
        return setup

    square = lambda: t(ramp(N * N)).view(N, N)  # noqa: E731
    cube = lambda: t(ramp(256 ** 3)).view(256, 256, 256)  # noqa: E731
    w["contiguous_4096x4096"] = copy_of(square, (N, N))
    w["transpose_4096x4096"] = copy_of(lambda: square().t(), (N, N))
    for p in ("021", "102", "120", "201", "210"):
        axes = tuple(int(c) for c in p)
        w["permute_256x256x256_" + p] = copy_of(lambda axes=axes: cube().permute(axes), (256,) * 3)

    def pad():
        a = t(ramp((N - 2) ** 2)).view(N - 2, N - 2)
        out = torch.zeros((N, N), dtype=torch.float32)
        inner, edges = out[1:-1, 1:-1], [out[0], out[-1], out[1:-1, 0], out[1:-1, -1]]

        def run():
            for e in edges:
                e.zero_()
            inner.copy_(a)
        return run, out
    w["pad_4094_to_4096"] = pad
    w["every_2nd_column_4096x4096"] = copy_of(lambda: square()[:, ::2], (N, N // 2))
    w["broadcast_4096x1_to_4096x4096"] = copy_of(lambda: t(ramp(N)).view(N, 1).expand(N, N), (N, N))

    def merge_heads():
        h = t(ramp(8 * 12 * 512 * 64)).view(8, 12, 512, 64)
        out = torch.zeros((8, 512, 768), dtype=torch.float32)
        ov, hv = out.view(8, 512, 12, 64), h.permute(0, 2, 1, 3)
        return (lambda: ov.copy_(hv)), out
    w["merge_heads_8x12x512x64"] = merge_heads

    def kv_cache_write():
        x = t(ramp(8 * 512 * 768)).view(8, 512, 768)
        cache = torch.zeros((8, 12, 512, 64), dtype=torch.float32)
        cv, xv = cache.permute(0, 2, 1, 3), x.view(8, 512, 12, 64)
        return (lambda: cv.copy_(xv)), cache
    w["kv_cache_write_8x512x768"] = kv_cache_write

    def im2col():
        # As NumPy: pad into a scratch tensor, then copy its windows (`unfold`).
        x = t(ramp(8 * 512 * 768)).view(8, 512, 768)
        xp = torch.zeros((8, 768, 515), dtype=torch.float32)
        out = torch.zeros((8, 768, 512, 4), dtype=torch.float32)
        head, body = xp[:, :, :3], xp[:, :, 3:]
        xt, windows = x.permute(0, 2, 1), xp.unfold(2, 4, 1)

        def run():
            head.zero_()
            body.copy_(xt)
            out.copy_(windows)
        return run, out
    w["im2col_pad3_8x768x512x4"] = im2col

    def causal_mask():
        # PyTorch has no negative strides: the rows of the windows are gathered in reverse.
        s, length = 512, 640
        windows = t(causal_row(s, length)).unfold(0, length, 1)
        rev = torch.arange(s - 1, -1, -1)
        out = torch.zeros((s, length), dtype=torch.float32)
        return (lambda: torch.index_select(windows, 0, rev, out=out)), out
    w["causal_mask_s512_p128"] = causal_mask
    return w


# Seconds slept before each implementation's runs. PyTorch's OpenMP threads (libgomp) spin
# for milliseconds after each parallel region before they sleep; a copy timed in that
# window shares the cores with them (the causal mask on 2 threads of an AMD EPYC family 26:
# 17 µs right after PyTorch's runs, 10 µs from 5 ms after them on). Every implementation
# starts on quiet cores.
SETTLE_S = 0.1


def median_ns(run, runs):
    times = []
    for _ in range(runs):
        if ARGS.gap_us:
            time.sleep(ARGS.gap_us / 1e6)
        t0 = time.perf_counter_ns()
        run()
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times)


def ours(name, out_path):
    """Runs the binary on one workload: (median ns, its thread count, kernels)."""
    cmd = [ARGS.bin, "run", name, "--threads", str(ARGS.threads), "--runs", str(ARGS.runs),
           "--gap-us", str(ARGS.gap_us), "--out", out_path]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        sys.exit(f"compare: `{' '.join(cmd)}` failed: {res.stderr.strip()}")
    fields = dict(f.split("=", 1) for f in res.stdout.split()[1:])
    return float(fields["median_ns"]), int(fields["threads"]), fields["kernels"]


def mismatch(got, want):
    """None when `got` equals `want` element by element, else where they first differ."""
    got = np.asarray(got).reshape(want.shape)
    if np.array_equal(got, want):
        return None
    bad = np.argwhere(got != want)[0]
    i = tuple(int(k) for k in bad)
    return f"first difference at {list(i)}: {got[i]} where NumPy has {want[i]}"


def cpu_model():
    fields = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        return platform.processor() or "unknown CPU"
    return (f"{fields.get('model name', '?')} (family {fields.get('cpu family', '?')}, "
            f"model {fields.get('model', '?')})")


def load():
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def main():
    listed = subprocess.run([ARGS.bin, "list"], capture_output=True, text=True, check=True)
    names = listed.stdout.split()
    only = [n for n in ARGS.only.split(",") if n]
    unknown = [n for n in only if n not in names]
    if unknown:
        sys.exit(f"compare: unknown workload(s) {unknown}; the binary lists {names}")
    npw, tw = numpy_workloads(), torch_workloads()
    missing = [n for n in names if n not in npw or n not in tw]
    if missing:
        sys.exit(f"compare: the binary has workload(s) this script does not define: {missing}")
    print(f"cpu: {cpu_model()}, {os.cpu_count()} logical CPUs; threads: {ARGS.threads} for symshape "
          f"(rayon pool) and PyTorch (reports {torch.get_num_threads()}); NumPy copies use one")
    print(f"numpy {np.__version__}, torch {torch.__version__}, python {platform.python_version()}; "
          f"median of {ARGS.runs} runs each, after one checked run"
          + (f", each after {ARGS.gap_us} µs asleep" if ARGS.gap_us else "")
          + f"; load average at start: {load()}")
    print()
    print("| workload | ours ms | NumPy ms | PyTorch ms | ours/NumPy | ours/PyTorch | kernels |")
    print("|---|---:|---:|---:|---:|---:|---|")
    sys.stdout.flush()
    wrong = 0
    with tempfile.TemporaryDirectory(prefix="symshape-compare-") as tmp:
        for name in names:
            if only and name not in only:
                continue
            path = os.path.join(tmp, name + ".f32")
            time.sleep(SETTLE_S)
            t_ours, threads, kernels = ours(name, path)
            if threads != ARGS.threads:
                sys.exit(f"compare: the binary ran {threads} threads, not {ARGS.threads}")
            run_np, out_np = npw[name]()
            run_np()
            want = out_np.copy()
            run_t, out_t = tw[name]()
            run_t()
            problems = []
            for who, got in (("ours", np.fromfile(path, dtype="<f4")), ("PyTorch", out_t.numpy())):
                diff = mismatch(got, want)
                if diff:
                    problems.append(f"{who}: {diff}")
            os.remove(path)
            gc.collect()
            gc.disable()
            time.sleep(SETTLE_S)
            t_np = median_ns(run_np, ARGS.runs)
            time.sleep(SETTLE_S)
            t_t = median_ns(run_t, ARGS.runs)
            gc.enable()
            status = ""
            if problems:
                wrong += 1
                status = " WRONG: " + "; ".join(problems)
            print(f"| {name} | {t_ours / 1e6:.2f} | {t_np / 1e6:.2f} | {t_t / 1e6:.2f} | "
                  f"{t_ours / t_np:.2f} | {t_ours / t_t:.2f} | {kernels}{status} |")
            sys.stdout.flush()
            del run_np, out_np, want, run_t, out_t
    print()
    print(f"load average at end: {load()}")
    if wrong:
        print(f"{wrong} workload(s) gave a result different from NumPy's")
        sys.exit(1)


if __name__ == "__main__":
    main()
