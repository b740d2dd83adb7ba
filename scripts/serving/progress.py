"""A long simulation's reporter (the serving CLI): the expected time before it starts, progress as it runs, and a
bound that stops it cleanly. I/O: lines on stderr.

The estimate times the engine on the run's first requests (PROBE of them) and scales linearly: the simulator's cost
is close to linear in the requests (2,000 / 10,000 / 100,000 chat requests, 9 cells: 0.38 / 1.65 / 16.5 s here).
A run it puts past --max-seconds is refused before it starts (issue 80: such a run used to go on until the bound
stopped it).
Runs below QUIET_BELOW requests in all print nothing."""
from __future__ import annotations

import sys
import time

from scripts.record.inputs import InputError

PROBE = 2000
QUIET_BELOW = 50_000
STEPS = 10  # progress lines per run: every 10 %


class Progress:
    """Counts finished requests against `total` (every run of the command), prints at each tenth, and stops the
    command with one line once `max_seconds` have passed."""

    def __init__(self, total: int, max_seconds: float | None, out=sys.stderr, began: float | None = None):
        self.total, self.max_seconds, self.out = total, max_seconds, out
        self.done, self.start, self.next_line = 0, time.monotonic(), total / STEPS  # --max-seconds counts from here
        self.began = self.start if began is None else began  # the command's start, reading included (`say`)
        self.loud = total >= QUIET_BELOW
        self.expected_after = 0.0  # seconds the metrics and records should take after the simulation (`expect`)

    def say(self, text: str) -> None:
        """A line about the run's other phases (reading the trace, writing the result), for a big run only: the
        simulation is the part the estimate covers, and on a million rows reading and writing took longer."""
        if self.loud:
            print(f"{text} ({time.monotonic() - self.began:.0f} s since the command started)", file=self.out,
                  flush=True)

    def expect(self, probe_seconds: float, probe_requests: int, after_seconds: float = 0.0) -> None:
        """Say what the run should take, from a probe of `probe_requests` that took `probe_seconds` to simulate and
        `after_seconds` to turn into metrics and per-request records (the part after the simulation, which on a
        million rows took four times the simulation's time: `finish_in_bound` holds it to the bound too)."""
        if not self.loud or probe_requests <= 0:
            return
        expected = probe_seconds * self.total / probe_requests
        self.expected_after = after_seconds * self.total / probe_requests
        bound = f"; --max-seconds {self.max_seconds:g} stops it" if self.max_seconds else ""
        print(f"simulating {self.total:,} requests: expected about {expected:,.0f} s here, then about "
              f"{self.expected_after:,.0f} s for the metrics and the records (the first {probe_requests:,} took "
              f"{probe_seconds:.2f} s and {after_seconds:.2f} s){bound}", file=self.out, flush=True)
        if self.max_seconds is not None and expected + self.expected_after > self.max_seconds:
            raise InputError(f"--max-seconds {self.max_seconds:g}: {self.total:,} requests should take about "
                             f"{expected + self.expected_after:,.0f} s here (from the first {probe_requests:,}); "
                             "stopped before the run, nothing was written (raise --max-seconds, or give fewer "
                             "requests)")

    def finish_in_bound(self) -> None:
        """After the simulation: stop in one line, writing nothing, when the metrics and records still to come would
        take the command past --max-seconds (estimated from the probe: `expect`)."""
        elapsed = time.monotonic() - self.start
        if self.max_seconds is not None and elapsed + self.expected_after > self.max_seconds:
            raise InputError(f"--max-seconds {self.max_seconds:g}: the simulation took {elapsed:.0f} s and the "
                             f"metrics and per-request records would take about {self.expected_after:.0f} s more; "
                             "stopped, nothing was written (raise --max-seconds, or give fewer requests)")

    def __call__(self, finished: int) -> None:
        self.done += finished
        elapsed = time.monotonic() - self.start
        if self.max_seconds is not None and elapsed > self.max_seconds:
            raise InputError(f"--max-seconds {self.max_seconds:g}: stopped after {elapsed:.0f} s with {self.done:,} of "
                             f"{self.total:,} requests simulated; nothing was written (raise --max-seconds, or give "
                             "fewer requests)")
        if self.loud and self.done >= self.next_line:
            share = 100 * self.done / self.total
            print(f"  {share:3.0f} % ({self.done:,} of {self.total:,} requests, {elapsed:.0f} s)", file=self.out,
                  flush=True)
            while self.next_line <= self.done:
                self.next_line += self.total / STEPS
