"""The render_site rule's work: the site from the rule's inputs into its outputs, within a time limit, every
declared output made or one line saying which is not. Writes the files (atomically, one by one); the rule's
publish step swaps them in only after every rule succeeded."""
from __future__ import annotations

import os
import signal
from pathlib import Path

from scripts.page.render import TemplateProblem, course_links, site_files
from scripts.record.anchors import DEFAULT_FILE
from scripts.record.atomic import write_bytes_atomic
from scripts.record.inputs import InputError, check_questions, read_json
from scripts.record.vendor import verified_runtime
from scripts.serving.experiments.load_page import page_bundle


def render_seconds() -> int:
    """The render's time limit: a normal render takes ~5 s; a template loop (a `range(10**9)`) would otherwise run
    until killed. C13_RENDER_SECONDS sets it (the test of the limit uses 2)."""
    return int(os.environ.get("C13_RENDER_SECONDS", "300"))


def _too_long(signum, frame):
    raise InputError(f"templates: the render ran past {render_seconds()} s (a template loops too long? "
                     "C13_RENDER_SECONDS sets the limit)")


def render(inp, out) -> None:
    """The site from the rule's inputs into its outputs (every declared output made, or one line saying which is
    not; the whole render within render_seconds())."""
    verified_runtime(Path(inp.runtime), Path(inp.vendor))  # the cache is checked again: only the pinned bytes ship
    signal.signal(signal.SIGALRM, _too_long)
    signal.alarm(render_seconds())
    try:
        files = site_files(inp.data, inp.get("tokens"), inp.get("bench"), check_questions(Path(inp.questions)),
                           Path(inp.templates[0]).parent, runtime=Path(inp.runtime),
                           load=page_bundle(read_json(Path(inp.serving))), course=course_links(Path(inp.course)),
                           prefix_path=inp.get("prefix"), real_path=inp.get("real"))
    except TemplateProblem as exc:  # an anchor's page names its anchor file (the default's is anchor-model.json)
        anchor = inp.get("anchor")
        raise InputError(f"{exc} (the page of {Path(anchor).as_posix()})" if anchor and
                         Path(anchor).name != DEFAULT_FILE else str(exc)) from None
    finally:
        signal.alarm(0)
    site = Path(out.html).parent
    missing = [p for p in out if Path(p).parent == site and Path(p).name not in files and Path(p).suffix]
    if missing:  # what Snakemake would report as MissingOutputException, said as the kit says it
        raise InputError(f"templates: the render made no {Path(missing[0]).name} (a template or the serving data "
                         "lacks what makes it)")
    for name, data in files.items():
        write_bytes_atomic(site / name, data)
