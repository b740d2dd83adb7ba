"""Run a build under the kit's own lock, so a crashed build heals and two builds never collide.

  python -m scripts.record.build_lock [--target T] [--fail-if-stale] [--publish [--data-only]] [--report FILE]
      -- <snakemake args>     (--fail-if-stale: exit 1 before publishing when the build differs from precomputed/)
  python -m scripts.record.build_lock --anchor FILE [--publish] -- <snakemake args>      (`make site ANCHOR=FILE`)
  python -m scripts.record.build_lock --all-anchors [--publish] -- <snakemake args>      (`make anchors`)
  python -m scripts.record.build_lock --recover-only

`--anchor FILE` builds that anchor's data and page (Snakemake config `anchor=FILE`, outputs under build/<name>/) and
publishes only site/<name>/; `--all-anchors` builds the default and every anchors/*.json in one Snakemake run (rule
`anchors`) and publishes them all together.

One build, from start to end, holds the lock: recovery of an interrupted publish, the input check, Snakemake, the
report, the completeness check and the publish. In that order:

1. The lock is an flock on .snakemake/c13-build.lock holding the owner's PID; the kernel drops it when the owner
   dies, however it dies. When it is held, another build is running: this one stops at once, naming its PID.
2. A publish cut short is finished (or its staging discarded): scripts/record/publish.recover.
3. Every input is checked (scripts/audit/inputs.check_all) before Snakemake starts: a bad one is one line naming
   the file and field, printed here, not inside Snakemake's error block.
4. No Snakemake process may be running in this directory (a plain `snakemake` started by hand holds its own locks
   without ours): the build stops with one line naming its PID. Snakemake's own locks (.snakemake/locks/) left
   behind are then a dead run's, and are removed.
5. With --publish: `snakemake --dry-run` must find nothing left to do for the same targets (every expected output
   made and current: a rule Snakemake skipped never lets old data through), then publish swaps precomputed/ and
   site/ (scripts/record/publish.py). A failed check publishes nothing.
Signals are passed on to Snakemake, which then stops its jobs and removes their incomplete outputs.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from scripts.record.lock import Busy, acquire, holder


def stale_snakemake_locks(root: Path = Path(".")) -> list[Path]:
    locks = root / ".snakemake" / "locks"
    return sorted(locks.glob("*.lock")) if locks.is_dir() else []


def live_snakemakes(root: Path = Path("."), exclude: set[int] | None = None) -> list[int]:
    """PIDs of Snakemake processes whose working directory is `root` (other than `exclude` and this process)."""
    import psutil

    here, skip = Path(root).resolve(), {os.getpid(), *(exclude or set())}
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        try:
            cmd = proc.info["cmdline"] or []
            if proc.info["pid"] in skip or not any("snakemake" in part for part in cmd[:3]):
                continue
            if Path(proc.cwd()).resolve() == here:
                found.append(proc.info["pid"])
        except (psutil.Error, OSError):
            continue
    return found


def clear_stale_locks(snakemake: list[str]) -> None:
    """Refuse while any Snakemake runs here (one started by hand holds, or is about to take, its own locks: ours
    would stop inside Snakemake with its LockException block); else remove the locks a dead one left."""
    if live := live_snakemakes():
        raise Busy(f"a Snakemake run (PID {live[0]}) is working in this directory; wait for it to finish, or stop it")
    if not (stale := stale_snakemake_locks()):
        return
    print(f"note: removing {len(stale)} stale Snakemake lock(s) left by a build that is gone "
          "(snakemake --unlock)", file=sys.stderr)
    subprocess.run([*snakemake, "--unlock", "--quiet", "all"], check=False, capture_output=True)


def check_inputs(anchors: list[str] = ()) -> int:
    """0, or 2 after the one-line error (printed here, outside Snakemake's error block). The check is the audit
    package's (`python -m scripts.audit.inputs [ANCHOR...]`); this package runs it, it does not import it."""
    return subprocess.run([sys.executable, "-m", "scripts.audit.inputs", *anchors]).returncode


def check_writable(root: Path = Path(".")) -> int:
    """0, or 2 naming the directory publish could not write (checked before the build, not after it). A probe
    file is created and removed in each: permission bits alone say nothing to root, nor about a read-only mount."""
    import tempfile

    for where in (root / "precomputed", root):
        try:
            with tempfile.TemporaryFile(dir=where, prefix=".c13-probe-"):
                pass
        except OSError as exc:
            print(f"error: {where.as_posix()}/ is not writable ({exc.strerror}): publish could not replace it "
                  "(nothing was built)", file=sys.stderr)
            return 2
    return 0


def incomplete(snakemake: list[str], targets: list[str], config: list[str] = ()) -> str | None:
    """None when a dry run finds nothing to do for `targets`; else the reason, one line. (Targets come first:
    `--quiet` and `--config` take every word after them.)"""
    run = subprocess.run([*snakemake, *targets, "--cores", "1", "--dry-run", "--quiet", "rules", *config],
                         capture_output=True, text=True)
    text = run.stdout + run.stderr
    if run.returncode == 0 and "Nothing to be done" in text:
        return None
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    jobs = [ln for ln in lines if ln.split()[:1] and ln.split()[0].isidentifier() and ln.split()[-1].isdigit()]
    return ("jobs still to run: " + ", ".join(jobs[:6])) if jobs else (lines[-1] if lines else "dry run failed")


def run_snakemake(snakemake: list[str], args: list[str], lock) -> int:
    child = subprocess.Popen([*snakemake, *args], pass_fds=[lock.fileno()])
    lock.seek(0)
    lock.truncate()
    lock.write(f"{os.getpid()} (snakemake {child.pid})\n")
    lock.flush()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, _frame: child.send_signal(signum))
    try:
        return child.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    opts = args[:args.index("--")] if "--" in args else args
    args = args[args.index("--") + 1:] if "--" in args else []
    publish_after = "--publish" in opts
    report = opts[opts.index("--report") + 1] if "--report" in opts else None
    targets = [opts[i + 1] for i, o in enumerate(opts) if o == "--target"]
    anchor = opts[opts.index("--anchor") + 1] if "--anchor" in opts else None
    every_anchor = "--all-anchors" in opts
    from scripts.record import publish
    from scripts.record.anchors import DEFAULT, anchor_files, check_stem, data_dir, site_dir
    from scripts.record.inputs import InputError

    checked, built, config = [], [], []
    try:
        if anchor:
            name = check_stem(Path(anchor))
            checked, built = [anchor], [name]
            targets = [(site_dir(name) / "index.html").as_posix(), (data_dir(name) / "MANIFEST.json").as_posix()]
            config = ["--config", f"anchor={anchor}"]
        elif every_anchor:
            files = {name: path for name, path in anchor_files().items() if name != DEFAULT}
            built, checked, targets = list(files), list(files.values()), ["anchors"]
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    lock = acquire()
    if lock is None:
        print(f"error: another build is running in this directory (PID {holder()}); wait for it to finish, or stop "
              "it", file=sys.stderr)
        return 75
    # Snakemake inherits the locked file, so the lock lives exactly as long as the build does, even if this
    # wrapper is killed first.
    publish.recover()
    if "--recover-only" in opts:
        return 0
    snakemake = [sys.executable, "-m", "snakemake"]
    try:
        clear_stale_locks(snakemake)
    except Busy as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 75
    if rc := check_inputs(checked) or (check_writable() if publish_after else 0):
        return rc
    if rc := run_snakemake(snakemake, [*targets, *args, *config], lock):
        return rc
    if report:
        done = subprocess.run([*snakemake, *(targets or ["all"]), "--report", report], capture_output=True,
                              text=True)
        if done.returncode:
            print("warning: snakemake --report failed", file=sys.stderr)
    if "--fail-if-stale" in opts and (rc := publish.check_built()):  # `make test`: before the publish overwrites
        return rc
    if publish_after:
        # What publish will copy must be complete and current, whatever was asked for: the site needs `all`.
        done = targets if anchor else ["anchors"] if every_anchor else ["data" if "--data-only" in opts else "all"]
        if why := incomplete(snakemake, done, config):
            print(f"error: the build is not complete ({why}): nothing published", file=sys.stderr)
            return 1
        publish.publish(with_site="--data-only" not in opts, default=not anchor, anchors=tuple(built))
    return 0


if __name__ == "__main__":
    sys.exit(main())
