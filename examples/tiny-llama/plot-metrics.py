#!/usr/bin/env python3
# plot-metrics.py: draws the train and validation loss of an hp-train
# --metrics file against the step
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: plot-metrics.py METRICS.jsonl OUTPUT.png|OUTPUT.svg
#
# The format follows the name of OUTPUT. A file that several runs
# appended to (a run and its resumption with --load) plots as one curve.

import json
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(f"usage: {sys.argv[0]} METRICS.jsonl OUTPUT.png|OUTPUT.svg")
    with open(sys.argv[1], encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    if not rows:
        sys.exit(f"{sys.argv[1]}: no metrics")
    # a resumed run appends the steps again from where it went on
    by_step = {row["step"]: row for row in rows}
    steps = sorted(by_step)
    figure, axes = plt.subplots(figsize=(7, 4))
    axes.plot(steps, [by_step[s]["train_loss"] for s in steps], label="train loss")
    val_steps = [s for s in steps if "val_loss" in by_step[s]]
    if val_steps:
        axes.plot(val_steps, [by_step[s]["val_loss"] for s in val_steps], "o-",
                  label="validation loss")
    axes.set_xlabel("step")
    axes.set_ylabel("cross-entropy loss (nats)")
    axes.legend()
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(sys.argv[2])


if __name__ == "__main__":
    main()
