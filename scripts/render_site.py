"""Rule render_site: the JSON + templates -> site/index.html, provenance.html, source/ (scripts/page/render.py)."""
if "snakemake" in globals():  # run by Snakemake from scripts/: make the repo root importable
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(snakemake.scriptdir).parent))  # noqa: F821

from pathlib import Path

from scripts.page.render import TemplateProblem, course_links, site_files
from scripts.record.atomic import write_bytes_atomic
from scripts.record.cli import run_cleanly
from scripts.record.inputs import InputError, check_questions, read_json
from scripts.record.vendor import verified_runtime
from scripts.serving.load_page import page_bundle

if "snakemake" in globals():
    sm = snakemake  # noqa: F821
    inp, out = sm.input, sm.output
    def render() -> None:
        verified_runtime(Path(inp.runtime), Path(inp.vendor))  # the cache is checked again: only the pinned bytes ship
        try:
            files = site_files(inp.data, inp.get("tokens"), inp.get("bench"), check_questions(Path(inp.questions)),
                               Path(inp.templates[0]).parent, runtime=Path(inp.runtime),
                               load=page_bundle(read_json(Path(inp.serving))), course=course_links(Path(inp.course)))
        except TemplateProblem as exc:
            raise InputError(str(exc)) from None
        for name, data in files.items():
            write_bytes_atomic(Path(out.html).parent / name, data)

    run_cleanly(render, log=sm.log[0])
