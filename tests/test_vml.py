"""attnlib._vml: after ``import attnlib``, a process's first exp over several threads is as accurate as any later
one. Without the first call on one thread that attnlib makes, 13 of 30 processes here got a chunk of MKL's
low-accuracy exp (relative error about 1.5e-4) on two threads (pytorch/pytorch issue 188792)."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

# a lesson's first softmax, as a learner's kernel runs it: two threads, scores from a matrix product, then the
# exp of every score at once (720,000 of them: chunks of 2,048 shared between the threads)
FIRST_EXP = """
import torch
torch.set_num_threads(2)
import attnlib
gen = torch.Generator().manual_seed(0)
q, k = torch.randn(2, 2, 4, 300, 32, generator=gen).unbind(0)
s = q @ k.transpose(-2, -1) / 32 ** 0.5
s = s - s.amax(-1, keepdim=True)
first = s.exp()
exact = s.double().exp()
print(float(((first.double() - exact).abs() / exact).max()))
"""

PROCESSES = 10  # without attnlib's first call, all ten pass by chance in about 1 run of 300 here


def first_exp_error() -> float:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", FIRST_EXP], env=env, capture_output=True, text=True, check=True)
    return float(done.stdout)


def test_the_first_exp_on_two_threads_is_accurate() -> None:
    with ThreadPoolExecutor(2) as pool:
        errors = list(pool.map(lambda _: first_exp_error(), range(PROCESSES)))
    assert max(errors) < 1e-6, f"relative error of the first exp in each of {PROCESSES} processes: {errors}"
