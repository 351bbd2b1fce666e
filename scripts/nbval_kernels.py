"""nbval under each CPU kernel this machine can run, with two torch threads per kernel, as learners run the lessons.

A seed trains another model, and a matrix product ends in other last bits, on an AVX-512, an AVX2 or an older
CPU, so a stored output or a lesson's claim can hold on the CPU that executed the lessons and fail on another:
on 2026-12-04 four cells passed `make test` (the portable kernel, one thread) and failed on an AVX-512 CPU or on
two threads (docs/teaching-guide.md, "The same seed on another CPU"). Run this after `make execute`: it checks
the lessons and their checked edition (each exercise's solution run and accepted) under the portable kernel,
AVX2 and AVX-512, as far as this CPU goes (ATEN_CPU_CAPABILITY), each with OMP_NUM_THREADS=2.

Usage: python scripts/nbval_kernels.py PATH … -- NBVAL_OPTION …   (make nbval-kernels passes the Makefile's
lessons and nbval options, so that they live in one place)
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KERNELS = ("default", "avx2", "avx512")  # torch's x86 CPU kernels, each running on the CPUs of the next


def kernels() -> list[str]:
    """The kernels of :data:`KERNELS` this CPU can run: up to its own (only the portable one elsewhere)."""
    import torch

    own = torch.backends.cpu.get_cpu_capability().lower()
    return list(KERNELS[: KERNELS.index(own) + 1]) if own in KERNELS else ["default"]


def main(args: list[str]) -> int:
    if "--" not in args:
        print(__doc__)
        return 2
    targets, nbval = args[: args.index("--")], args[args.index("--") + 1 :]
    subprocess.run([sys.executable, "scripts/build_editions.py", "--out", "build/editions"], cwd=REPO, check=True)
    ran = kernels()
    failed = []
    for kernel in ran:
        env = {**os.environ, "ATEN_CPU_CAPABILITY": kernel, "OMP_NUM_THREADS": "2"}
        start = time.monotonic()
        print(f"== ATEN_CPU_CAPABILITY={kernel}, two threads per kernel: {' '.join(targets)}", flush=True)
        pytest = [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadscope", *targets, *nbval]
        done = subprocess.run(pytest, cwd=REPO, env=env)
        print(f"== {kernel}: {'passed' if done.returncode == 0 else 'FAILED'} in {time.monotonic() - start:.0f} s")
        if done.returncode:
            failed.append(kernel)
    print(f"failed under: {', '.join(failed)}" if failed else "passed under every kernel: " + ", ".join(ran))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
