"""A GPU edit reruns only what depends on it (issue 80): the serving sweep and the real-engine comparisons use no GPU
but the anchor's, so they take the anchor's entry of config/gpus.json as a stamp of its own
(scripts/record/gpu_stamp.py), rewritten only when that entry changes; the rules that read every GPU keep
config/gpus.json."""
import json
import os
import re
import shutil

from scripts.record.gpu_stamp import stamp_path, write_stamp
from tests.conftest import ROOT


def kit(tmp_path):
    (tmp_path / "config").mkdir()
    shutil.copy(ROOT / "config" / "gpus.json", tmp_path / "config" / "gpus.json")
    shutil.copy(ROOT / "anchor-model.json", tmp_path / "anchor-model.json")
    return tmp_path


def test_the_stamp_moves_only_when_the_anchors_gpu_does(tmp_path):
    root = kit(tmp_path)
    path = root / write_stamp("default", "anchor-model.json", root)
    assert path == root / stamp_path("default")
    gid = json.loads((root / "anchor-model.json").read_text(encoding="utf-8"))["hardware"]["gpu"]["value"]
    assert json.loads(path.read_text(encoding="utf-8"))["gpu"] == gid
    os.utime(path, (1_000_000, 1_000_000))
    gpus_file = root / "config" / "gpus.json"
    gpus = json.loads(gpus_file.read_text(encoding="utf-8"))
    other = next(g for g in gpus["gpus"] if g != gid)
    gpus["gpus"]["added"] = gpus["gpus"][other]  # a GPU added
    gpus["gpus"][other]["label"] = "edited"  # and one the anchor does not run on edited
    gpus_file.write_text(json.dumps(gpus), encoding="utf-8")
    write_stamp("default", "anchor-model.json", root)
    assert path.stat().st_mtime == 1_000_000  # unchanged bytes, unchanged mtime: nothing downstream reruns
    gpus["gpus"][gid]["peak_bf16_flops"]["value"] *= 2  # the anchor's own GPU edited
    gpus_file.write_text(json.dumps(gpus), encoding="utf-8")
    write_stamp("default", "anchor-model.json", root)
    assert path.stat().st_mtime > 1_000_000
    assert json.loads(path.read_text(encoding="utf-8"))["entry"]["peak_bf16_flops"]["value"] == \
        gpus["gpus"][gid]["peak_bf16_flops"]["value"]


def test_the_simulations_take_the_stamp_and_the_page_rules_every_gpu():
    """No rule of the serving sweep or the real-engine comparisons names config/gpus.json; the rule that builds the
    page's data (every GPU the page can switch to) does."""
    for name in ("simulated", "measured"):
        text = (ROOT / "rules" / f"{name}.smk").read_text(encoding="utf-8")
        assert "config/gpus.json\"" not in text, name
        rules = re.findall(r"^rule (\w+):", text, re.M)
        assert len(re.findall(r"^\s+gpu=", text, re.M)) >= 3, (name, rules)
    assert 'gpus="config/gpus.json"' in (ROOT / "rules" / "data.smk").read_text(encoding="utf-8")
