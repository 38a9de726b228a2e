"""Writes shares_memory.txt: NumPy's answers for pairs of strided views of one buffer.

Run from this folder with NumPy installed: `python3 shares_memory.py > shares_memory.txt`.
Each line is `A ; B ; may ; shares`, a view written `[SHAPE] [STRIDES] OFFSET` in
elements of 8 bytes (NumPy sees the same views in bytes), `may` NumPy's
`may_share_memory` and `shares` its exact `shares_memory`.
"""

import random

import numpy as np
from numpy.lib.stride_tricks import as_strided

BUF = 96
ITEM = 8


def random_view(rng):
    while True:
        rank = rng.randint(0, 3)
        shape = [rng.randint(0, 5) for _ in range(rank)]
        strides = [rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 12, -1, -2, -3, -5]) for _ in range(rank)]
        offset = rng.randint(0, BUF - 1)
        if 0 in shape:
            return shape, strides, offset
        lo = offset + sum(min(0, (d - 1) * t) for d, t in zip(shape, strides))
        hi = offset + sum(max(0, (d - 1) * t) for d, t in zip(shape, strides))
        if 0 <= lo and hi < BUF:
            return shape, strides, offset


def numpy_view(base, view):
    shape, strides, offset = view
    return as_strided(base[offset:], shape=shape, strides=[t * ITEM for t in strides])


def text(view):
    shape, strides, offset = view
    return f"{shape} {strides} {offset}"


def main():
    rng = random.Random(13)
    base = np.zeros(BUF, dtype=np.int64)
    seen = set()
    lines = []
    while len(lines) < 500:
        a, b = random_view(rng), random_view(rng)
        key = (text(a), text(b))
        if key in seen:
            continue
        seen.add(key)
        va, vb = numpy_view(base, a), numpy_view(base, b)
        may = np.may_share_memory(va, vb)
        shares = np.shares_memory(va, vb)
        # Keep the interesting cases: most pairs whose extents overlap.
        if not may and rng.random() < 0.97:
            continue
        lines.append(f"{text(a)} ; {text(b)} ; {str(may).lower()} ; {'yes' if shares else 'no'}")
    for line in lines:
        print(line)


main()
