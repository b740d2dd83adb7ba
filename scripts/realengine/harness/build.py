"""Build llama.cpp's `llama-server` from the sdist of the pinned `llama-cpp-python` (config/real_engine.json
`engine`): fetch the archive from the package registry with pip, refuse it unless its sha256 matches, unpack
only the vendored llama.cpp tree, configure with the pinned CMake flags and build the one target. The binary is
cached under .cache/real-engine/<key>/ where the key hashes the archive's sha256, the flags and the target, so a
second run does not rebuild. `python -m scripts.realengine.harness.build` prints the binary's path."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from scripts.record.inputs import InputError
from scripts.tokens.files import sha256_file

CONFIG = Path("config/real_engine.json")
CACHE = Path(".cache/real-engine")


def load_config(path: Path = CONFIG) -> dict:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: cannot read ({e})") from None


def build_key(engine: dict) -> str:
    text = json.dumps([engine["archive_sha256"], engine["cmake_flags"], engine["target"]])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def fetch_archive(engine: dict, cache: Path = CACHE) -> Path:
    """The sdist from the registry (pip), checked against its pinned sha256; a mismatch is an error, never used."""
    archive = cache / "dl" / engine["archive"]
    if not archive.exists():
        archive.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", engine["package"],
                        f"{engine['package']}=={engine['version']}", "-d", str(archive.parent)], check=True,
                       stdout=subprocess.DEVNULL)
    got = sha256_file(archive)
    if got != engine["archive_sha256"]:
        raise InputError(f"{archive}: sha256 {got} is not the pinned engine.archive_sha256 "
                         f"{engine['archive_sha256']} (config/real_engine.json)")
    return archive


def unpack_source(archive: Path, engine: dict, dest: Path) -> Path:
    """Only <sdist>/vendor/llama.cpp, with no member escaping the destination."""
    if not dest.exists():
        tmp = dest.with_name(dest.name + ".part")
        shutil.rmtree(tmp, ignore_errors=True)
        prefix = f"{archive.name.removesuffix('.tar.gz')}/{engine['source_dir']}/"
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers() if m.name.startswith(prefix)]
            tar.extractall(tmp, members=members, filter="data")
        tmp.rename(dest)
    return dest / archive.name.removesuffix(".tar.gz") / engine["source_dir"]


def llama_cpp_commit(src: Path) -> str:
    """The vendored tree's build number and commit as its CMake scripts would report them, when recorded."""
    for name in ("build-info.cmake", "cmake/build-info.cmake"):
        path = src / name
        if path.exists():
            for line in path.read_text().splitlines():
                if "BUILD_COMMIT" in line and '"' in line:
                    return line.split('"')[1]
    return "unknown"


def build(config: dict | None = None, cache: Path = CACHE, jobs: int = 2) -> Path:
    engine = (config or load_config())["engine"]
    key = build_key(engine)
    binary = cache / key / engine["target"]
    if binary.exists():
        return binary
    archive = fetch_archive(engine, cache)
    src = unpack_source(archive, engine, cache / f"src-{engine['archive_sha256'][:16]}")
    work = cache / f"build-{key}"
    started = time.time()
    subprocess.run(["cmake", "-S", str(src), "-B", str(work), "-G", "Ninja", *engine["cmake_flags"]], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", str(work), "--target", engine["target"], "-j", str(jobs)], check=True,
                   stdout=subprocess.DEVNULL)
    built = work / "bin" / engine["target"]
    binary.parent.mkdir(parents=True, exist_ok=True)
    tmp = binary.with_name(binary.name + ".part")
    shutil.copy2(built, tmp)
    os.replace(tmp, binary)
    info = {"archive_sha256": engine["archive_sha256"], "cmake_flags": engine["cmake_flags"],
            "build_seconds": round(time.time() - started, 1), "binary_bytes": binary.stat().st_size,
            "binary_sha256": sha256_file(binary), "jobs": jobs}
    (binary.parent / "build.json").write_text(json.dumps(info, indent=1) + "\n")
    return binary


if __name__ == "__main__":
    print(build())
