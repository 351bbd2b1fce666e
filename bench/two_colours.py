"""Why several heads (lesson 11): the two-colours task with one head and with two, at the same width and
training budget, over several seeds.

Each seed sets the initial parameters and the training batches; every model is measured on 2048 held-out
sets. Printed per seed and h: the held-out accuracy, each head's total weight on the red and on the blue
items (uniform: 1/3 each), and the training time; then the best accuracy a head that reads one colour only,
or all the numbers equally, can reach (by enumeration), and the spread per h.

Usage: python -m bench.two_colours [--seeds 5] [--steps 600] [--d-model 4] [--json PATH]

Lesson 11 prints the figures stored with ``--json bench/results/two_colours.json`` (through results.write, which
records the date, the commit, the machine and its load).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from attnlib.lessons.l11_multihead import (
    TwoColoursModel,
    best_guess_accuracy,
    train_two_colours,
    two_colours_report,
)
from attnlib.tasks import BLUE, RED, TwoColoursTask
from bench import results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--d-model", type=int, default=4)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    task = TwoColoursTask()
    rows = []
    for seed in range(args.seeds):
        for heads in (1, 2):
            torch.manual_seed(seed)
            model = TwoColoursModel(task, d_model=args.d_model, num_heads=heads)
            start = time.perf_counter()
            train_two_colours(model, steps=args.steps, seed=seed, progress=False)  # the script prints each run
            seconds = time.perf_counter() - start
            report = two_colours_report(model.eval())
            red = [round(float(w), 2) for w in report.on_colour[:, RED]]
            blue = [round(float(w), 2) for w in report.on_colour[:, BLUE]]
            rows.append(
                {"seed": seed, "h": heads, "accuracy": report.accuracy, "red": red, "blue": blue, "seconds": seconds}
            )
            print(
                f"seed {seed}  h = {heads}: accuracy {report.accuracy:.3f}  weight on red {red}  "
                f"on blue {blue}  {seconds:.1f} s",
                flush=True,
            )
    one, bag = best_guess_accuracy(task, "blue"), best_guess_accuracy(task, "bag")
    print(f"best guess knowing one colour's numbers: {one:.3f}; knowing all numbers without colours: {bag:.3f}")
    for heads in (1, 2):
        accuracies = [r["accuracy"] for r in rows if r["h"] == heads]
        print(f"h = {heads}: accuracy from {min(accuracies):.3f} to {max(accuracies):.3f} over {len(accuracies)} seeds")
    if args.json:
        figures = {"steps": args.steps, "d_model": args.d_model, "rows": rows, "one_colour": one, "bag": bag}
        results.write(Path(args.json), figures)


if __name__ == "__main__":
    main()
