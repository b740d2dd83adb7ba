"""Run Snakemake under the kit's own build lock, so a crashed build heals and two builds never collide.

  python -m scripts.record.build_lock -- <snakemake arguments>        (what every `make` build step runs)

The lock is an flock on .snakemake/c13-build.lock holding the owner's PID; the kernel drops it when the owner
dies, however it dies. So: when the lock is held, another build is running, and this one stops at once, naming
its PID. When it is free but Snakemake's own locks (.snakemake/locks/) are there, the build that left them is
gone (killed, or the machine rebooted): they are stale, and `snakemake --unlock` clears them, saying so. Signals
are passed on to Snakemake, which then stops its jobs and removes their incomplete outputs.
"""
from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
from pathlib import Path

LOCK = Path(".snakemake/c13-build.lock")


def holder(path: Path = LOCK) -> str:
    try:
        return path.read_text().strip() or "unknown"
    except OSError:
        return "unknown"


def acquire(path: Path = LOCK):
    """The open, locked file; or None when another live process holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fh = open(path, "a+")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        return None
    fh.seek(0)
    fh.truncate()
    fh.write(f"{os.getpid()}\n")
    fh.flush()
    return fh


def stale_snakemake_locks(root: Path = Path(".")) -> list[Path]:
    locks = root / ".snakemake" / "locks"
    return sorted(locks.glob("*.lock")) if locks.is_dir() else []


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--"]:
        args = args[1:]
    lock = acquire()
    if lock is None:
        print(f"error: another build is running in this directory (PID {holder()}); wait for it to finish, or stop "
              "it", file=sys.stderr)
        return 75
    snakemake = [sys.executable, "-m", "snakemake"]
    if stale := stale_snakemake_locks():
        print(f"note: removing {len(stale)} stale Snakemake lock(s) left by a build that is gone "
              "(snakemake --unlock)", file=sys.stderr)
        subprocess.run([*snakemake, "--unlock", "--quiet", "all"], check=False, capture_output=True)
    # Snakemake inherits the locked file, so the lock lives exactly as long as the build does, even if this
    # wrapper is killed first.
    child = subprocess.Popen([*snakemake, *args], pass_fds=[lock.fileno()])
    lock.seek(0)
    lock.truncate()
    lock.write(f"{os.getpid()} (snakemake {child.pid})\n")
    lock.flush()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, _frame: child.send_signal(signum))
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
