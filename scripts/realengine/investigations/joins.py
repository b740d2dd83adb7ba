"""`python -m scripts.realengine.investigations.joins`: how late after an iteration's tokens can a request still get
into the batch the engine forms next? Reads only committed files (the held-out sessions' calibration load runs);
nothing is written.

The simulator forms each batch the instant the previous iteration ends (the engine sees a request
`request_overhead_s` after its send, the round trip inside a lone TTFT), so a request that reaches it even a moment
later waits a whole iteration. llama-server first sends the finished iteration's tokens and only then takes the new
tasks and forms the next batch (tools/server/server-queue.cpp `start_loop`: process_new_tasks, then update_slots; the
llama.cpp of llama-cpp-python 0.3.36), so the real cut-off is a little later and varies. A closed loop meets that
edge on every wave: a request sent a millisecond or two after the finish that freed its slot either joins the next
batch or waits one (held-out session 11, 2026-12-05: one that joined moved the whole loop into another pattern).

For every request whose prompt arrived while the engine was busy (the iteration after the one it arrived in still
decodes a request of that one), `x` is its send plus the fitted `request_overhead_s`, less the first token of the
iteration it arrived in, as the client read them (stepmodel.iterations' clusters). It `joined` when its first token
came with the very next iteration: the batch was formed after it arrived, later than the simulator forms it."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from scripts.realengine.analyses import calibrate, stepmodel
from scripts.realengine.analyses.heldout_comparison import session_key
from scripts.realengine.analyses.settings import comparison_settings
from scripts.record.inputs import read_json

EDGES_MS = (0, 1, 2, 3, 4, 6, 8, 12, 20)  # the bins of x the table counts, in milliseconds


def arrivals(doc: dict, overhead_s: float, gap_s: float) -> list[tuple[float, bool]]:
    """(x in seconds, joined) for each successful request that arrived while the engine was busy (module
    docstring). Tokens that reach the client within `gap_s` of each other count as one iteration's."""
    clusters = stepmodel.token_clusters(stepmodel.token_events(doc)[0], gap_s)
    starts = np.array([c[0][0] for c in clusters])
    first_in = {i: n for n, c in enumerate(clusters) for _, i, k in c if k == 0}
    out = []
    for i, n in sorted(first_in.items()):
        seen = doc["send_times"][i] + overhead_s
        b = int(np.searchsorted(starts, seen, side="right")) - 1  # the iteration it arrived in
        if b < 0 or b + 1 >= len(clusters):
            continue
        before = {j for _, j, _ in clusters[b]}
        if not any(k > 0 and j in before for _, j, k in clusters[b + 1]):
            continue  # the engine may have idled: nothing to join
        out.append((seen - float(starts[b]), n == b + 1))
    return out


def table(rows: list[tuple[float, bool]], edges_ms=EDGES_MS) -> list[dict]:
    """Per bin of x: how many requests arrived, and how many joined the next batch."""
    x = np.array([r[0] for r in rows], float) * 1e3
    joined = np.array([r[1] for r in rows], bool)
    out = []
    for lo, hi in zip(edges_ms, (*edges_ms[1:], np.inf), strict=True):
        inside = (x >= lo) & (x < hi)
        out.append({"from_ms": lo, "to_ms": float(hi), "arrived": int(inside.sum()),
                    "joined": int(joined[inside].sum())})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", default="precomputed/serve-heldout", help="the folder of the session-N folders")
    args = ap.parse_args(argv)
    settings = comparison_settings(read_json(Path("config/real_engine.json")))
    pooled = []
    for folder in sorted(Path(args.sessions).glob("session-*"), key=lambda p: session_key(p.name)):
        for _, _, docs, model in calibrate.fitted_in(folder / "calibration", settings):
            rows = [r for d in docs for r in arrivals(d, model.request_overhead_s, settings["iteration_gap_s"])]
            pooled += rows
            late = [r for r in rows if r[0] >= 0.003]
            print(f"{folder.name}: {len(rows)} arrivals while busy; {sum(j for _, j in rows)} joined the next batch, "
                  f"{sum(j for _, j in late)} of {len(late)} arriving 3 ms or later")
    print("pooled: " + "; ".join(f"{c['from_ms']:g}-{c['to_ms']:g} ms: {c['joined']}/{c['arrived']}"
                                 for c in table(pooled)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
