"""Attention at scale: time and peak memory of the readable path, the tiled path and torch's SDPA,
and the speed-up of a KV cache. Prints figures; it is not a test.

Usage: .venv/bin/python -m bench.bench_scale [--quick]; writes ``bench/results/scale.json``.

Each (method, n) runs in a fresh Python process, so its peak memory (``ru_maxrss`` after − before the
call) is its own: float32, batch 1, one head, d = 64. Time is the median of repeated calls.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

from bench import results

CASE = r"""
import json, resource, statistics, sys, time
import torch
import torch.nn.functional as F
import attnlib
method, n, repeats, layout = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
torch.manual_seed(0)
shape = (1, n, 64) if layout == "3d" else (1, 1, n, 64)
q, k, v = (torch.randn(shape) for _ in range(3))
small = [t[..., :64, :] for t in (q, k, v)]
methods = {
    "attention": attnlib.attention,
    "tiled": attnlib.tiled_attention,  # block_size=128, its default
    "sdpa": F.scaled_dot_product_attention,
}
run = lambda: methods[method](q, k, v)
with torch.no_grad():
    methods[method](*small)  # warm-up: thread pools and kernels allocate once, not counted
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
print(json.dumps({"peak_mib": peak / 1024, "median_ms": 1000 * statistics.median(times)}))
"""


def case(method: str, n: int, repeats: int, layout: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CASE, method, str(n), str(repeats), layout], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def kv_cache(new_tokens: int = 256) -> tuple[float, float, bool]:
    import torch

    from attnlib.kv_cache import generate
    from attnlib.transformer import TinyTransformer

    torch.manual_seed(0)
    model = TinyTransformer(64, 512, 8, 4, max_len=16 + new_tokens, causal=True).eval()  # 12.6 M parameters
    prompt = torch.randint(64, (1, 16), generator=torch.Generator().manual_seed(1))
    timings = {}
    outputs = {}
    for use_cache in (True, False):
        runs = []
        for _ in range(3):
            start = time.perf_counter()
            outputs[use_cache] = generate(model, prompt, new_tokens, use_cache=use_cache)
            runs.append(time.perf_counter() - start)
        timings[use_cache] = statistics.median(runs)
    return timings[True], timings[False], bool(torch.equal(outputs[True], outputs[False]))


LAYOUTS = {
    "3d": "inputs (1, n, 64): SDPA takes its math path",
    "4d": "inputs (1, 1, n, 64): SDPA takes its fused flash-attention CPU kernel",
}


def main(quick: bool) -> None:
    sizes = (1024, 2048, 4096) if quick else (1024, 2048, 4096, 8192, 16384)
    figures: dict = {}
    for layout, what in LAYOUTS.items():
        print(f"attention at scale, float32, batch 1, one head, d = 64, {what} (fresh process per case)")
        print(
            f"{'n':>6} | {'attention ms':>12} {'MiB':>6} | {'tiled ms':>9} {'MiB':>6} | {'SDPA ms':>8} {'MiB':>6} | "
            "tiled/SDPA time  tiled/attention memory"
        )
        for n in sizes:
            r = {m: case(m, n, 5 if n <= 8192 else 3, layout) for m in ("attention", "tiled", "sdpa")}
            a, t, s = r["attention"], r["tiled"], r["sdpa"]
            figures.setdefault(layout, {})[n] = r
            row = (
                f"{n:>6} | {a['median_ms']:>12.1f} {a['peak_mib']:>6.0f} | {t['median_ms']:>9.1f} "
                f"{t['peak_mib']:>6.0f} | {s['median_ms']:>8.1f} {s['peak_mib']:>6.0f} | "
                f"{t['median_ms'] / s['median_ms']:>15.2f}  1/{a['peak_mib'] / max(t['peak_mib'], 0.5):.0f}"
            )
            print(row)
    cached, recomputed, same = kv_cache()
    print(
        f"KV cache, 256 new tokens after 16 (4 layers, 8 heads, d_model 512): {cached * 1000:.0f} ms cached vs "
        f"{recomputed * 1000:.0f} ms recomputed: {recomputed / cached:.1f}x faster, identical tokens: {same}"
    )
    kv = {"cached_ms": cached * 1000, "recomputed_ms": recomputed * 1000, "identical": same}
    results.write(results.RESULTS / "scale.json", {"layouts": LAYOUTS, "rows": figures, "kv_cache": kv})


if __name__ == "__main__":
    main("--quick" in sys.argv)
