"""What every page is rendered with: the Jinja environment (autoescaping everywhere, its compiled templates
memoized), the questions log's markdown, and the build's stamp (the commit and the date of the inputs' last
commit, never the wall clock)."""

import os
import re
import subprocess
from pathlib import Path

from jinja2 import (
    Environment,
    FileSystemBytecodeCache,
    FileSystemLoader,
    StrictUndefined,
    pass_context,
    select_autoescape,
)
from jinja2.sandbox import SandboxedEnvironment
from markdown_it import MarkdownIt
from markupsafe import Markup, escape

from scripts.common.display import chinese_number
from scripts.page import gpu_wording
from scripts.record import memo

REPO = Path(__file__).resolve().parents[2]



def build_date(paths: list[str]) -> str:
    """Last commit that touched the inputs; SOURCE_DATE_EPOCH when set; never the wall clock."""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        import datetime as dt
        return dt.datetime.fromtimestamp(int(os.environ["SOURCE_DATE_EPOCH"]), dt.UTC).date().isoformat()
    out = subprocess.run(["git", "log", "-1", "--format=%cs", "--", *paths], capture_output=True, text=True, cwd=REPO)
    return out.stdout.strip() or "未提交"


def git_commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, cwd=REPO)
    return out.stdout.strip() or "uncommitted"


def markdown(text: str) -> Markup:
    """The questions log as CommonMark (links, emphasis, code, lists) with raw HTML off: any tag in the file is shown
    as text. Headings move down two levels (## -> h4) to sit under the section's own h2. HTML comments are the
    maintainers' notes and are dropped."""
    md = MarkdownIt("commonmark", {"html": False})
    tokens = md.parse(re.sub(r"<!--.*?-->", "", text, flags=re.S))
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(6, int(token.tag[1]) + 2)}"
    return Markup(md.renderer.render(tokens, md.options, {}))


def template_memo() -> FileSystemBytecodeCache | None:
    """Jinja's compiled templates, each checked against its source's checksum before use (Jinja's own bucket check;
    compiling the sixteen took about 0.6 s of each render), beside the other memos (scripts/record/memo.py)."""
    where = memo.folder("jinja")
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError:  # a read-only checkout compiles every time
        return None
    return FileSystemBytecodeCache(str(where))


def jinja_env(templates: Path) -> Environment:
    """Autoescaping everywhere: text from the JSON is inserted as text, never as HTML. Sandboxed: a template reaches
    no Python internals, and a range of more than 100,000 items is refused at once (jinja2.sandbox MAX_RANGE) rather
    than looping until the render's time limit (scripts/page/site.py render_seconds)."""
    env = SandboxedEnvironment(loader=FileSystemLoader(templates), autoescape=select_autoescape(default=True,
                      default_for_string=True), undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                      bytecode_cache=template_memo())
    env.filters["log2"] = lambda v: int(v).bit_length() - 1
    env.filters["cn_number"] = chinese_number
    env.globals.update(gpu_where=gpu_where, gpu_mixed=gpu_mixed)
    return env


def _worded(gpus: list[dict], fails, wording, also=()) -> Markup:
    """`wording(gpus, fails)` shown, in a span carrying how many characters its longest form (over every set of
    failing GPUs) has beyond it, read by scripts/page/reading.py; `also`: failing sets the wording treats apart."""
    shown = wording(gpus, fails)
    more = gpu_wording.extra(shown, lambda some: wording(gpus, some), gpus, also)
    return Markup(f'<span data-longest-extra="{more}">{escape(shown)}</span>')


@pass_context
def gpu_where(context, fails, hedge: str, excused=None, because: str = "") -> Markup:
    """gpu_wording.where on the page's GPUs (`d.gpus`), marked with its longest form."""
    return _worded(context["d"]["gpus"], fails, lambda g, f: gpu_wording.where(g, f, hedge, excused, because),
                   [excused] if excused is not None else ())


@pass_context
def gpu_mixed(context, fails, yes: str, no: str, hedge: str) -> Markup:
    """gpu_wording.mixed on the page's GPUs, marked with its longest form."""
    return _worded(context["d"]["gpus"], fails, lambda g, f: gpu_wording.mixed(g, f, yes, no, hedge))
