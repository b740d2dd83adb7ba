"""Write files whole or not at all: a temp file beside the target, then an atomic rename; swap two directories in one
step where the system can (exchange_paths)."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def write_bytes_atomic(path: Path | str, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def dumps_json(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=1, allow_nan=False) + "\n"


def write_json_atomic(path: Path | str, obj: object) -> None:
    write_bytes_atomic(path, dumps_json(obj).encode("utf-8"))


_RENAME_EXCHANGE, _AT_FDCWD = 2, -100  # <linux/fs.h>, <fcntl.h>


def exchange_paths(a: Path | str, b: Path | str) -> bool:
    """Swap two existing paths in one step (Linux renameat2 RENAME_EXCHANGE: a reader sees the old or the new, never
    neither). False, with nothing changed, where the system or file system cannot (another OS, an old kernel or
    libc, a file system without it): the caller then renames in two steps."""
    import ctypes
    import errno

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EPERM):
        return False
    raise OSError(err, os.strerror(err), str(a), None, str(b))
