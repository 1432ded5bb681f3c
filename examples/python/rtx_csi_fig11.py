"""Cao et al. 2012, RTX_CSI, Fig. 11 (case 1) from Python: average CMT throughput
against the receive buffer for three retransmission policies, at 5 % loss on path 1.

The experiment is the study's own sweep file (`scenarios/studies/rtx-csi/case1.toml`:
the dual-dumbbell topology with TCP and UDP background traffic, RTX-CWND, RTX-SSTHRESH
and RTX_CSI, rbuf 16-256 KB). Its loss axis is fixed at the figure's 5 %, the rest is
read from the file unchanged, run as a sweep, and drawn from the aggregate with
matplotlib: bars are means over seeds, whiskers their 95 % confidence intervals.

    pip install ./python matplotlib
    python examples/python/rtx_csi_fig11.py                 # quick: 3 seeds x 15 s
    python examples/python/rtx_csi_fig11.py --seeds 20 --duration 100s   # as the study

Writes rtx_csi_fig11.png and rtx_csi_fig11.csv (the plotted numbers) to --out.
"""

import argparse
import sys
import tomllib
from pathlib import Path

import cmtlab

ROOT = Path(__file__).resolve().parents[2]
CASE1 = ROOT / "scenarios" / "studies" / "rtx-csi" / "case1.toml"
LOSS = 0.05


def figure_sweep(seeds: int, duration: str) -> dict:
    """The study's case-1 sweep with the loss axis fixed at the figure's value."""
    spec = tomllib.loads(CASE1.read_text())
    spec["base"] = str(CASE1.parent / spec["base"])
    spec["name"] = "rtx-csi-fig11"
    spec["seeds"] = seeds
    spec["axes"] = [a for a in spec["axes"] if a["key"] != "links.s-if1.loss"]
    spec["set"] = {**spec.get("set", {}), "links.s-if1.loss": LOSS, "duration": duration}
    # The file's reports and comparisons refer to the loss axis or to other figures.
    spec.pop("reports", None)
    return spec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Reproduce RTX_CSI Fig. 11 from Python")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--duration", default="15s")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--out", type=Path, default=Path("out/python-fig11"))
    a = ap.parse_args(argv)

    s = cmtlab.sweep(figure_sweep(a.seeds, a.duration), jobs=a.jobs, out=a.out / "sweep")
    g = s.aggregate[s.aggregate["metric"] == "goodput_mbps"]
    table = g.pivot(index="receiver.rbuf_value", columns="association.rtx", values="mean")
    low = g.pivot(index="receiver.rbuf_value", columns="association.rtx", values="ci95_low")
    high = g.pivot(index="receiver.rbuf_value", columns="association.rtx", values="ci95_high")
    a.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(a.out / "rtx_csi_fig11.csv")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    policies = ["rtx-cwnd", "rtx-ssthresh", "rtx-csi"]
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / len(policies)
    for k, p in enumerate(policies):
        xs = [i + (k - 1) * width for i in range(len(table.index))]
        err = [table[p] - low[p], high[p] - table[p]]
        ax.bar(xs, table[p], width, yerr=err, capsize=3, label=p)
    ax.set_xticks(range(len(table.index)))
    ax.set_xticklabels([f"{v // 1024} KB" for v in table.index])
    ax.set_xlabel("receive buffer")
    ax.set_ylabel("average throughput (Mbit/s)")
    ax.set_title(f"RTX_CSI Fig. 11, case 1: {LOSS:.0%} loss on path 1 ({a.seeds} seeds, {a.duration})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(a.out / "rtx_csi_fig11.png", dpi=120)
    print(table.round(3).to_string())
    print(f"figure: {a.out / 'rtx_csi_fig11.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
