"""The tree reads like the pipeline: rule entry scripts at the top of scripts/, libraries in packages, no cycles."""
import ast
import re
from pathlib import Path

from tests.conftest import ROOT

SCRIPTS = ROOT / "scripts"


def rule_scripts() -> dict[str, str]:
    """rule name -> its `script:` path from the checkout's root, read from the Snakefile and rules/*.smk (whose
    `script:` paths are relative to rules/)."""
    found = {}
    for path in [ROOT / "Snakefile", *sorted((ROOT / "rules").glob("*.smk"))]:
        text = path.read_text(encoding="utf-8")
        for rule, script in re.findall(r"^rule (\w+):\n(?:(?!^rule ).*\n)*?\s+script:\n\s+\"([^\"]+)\"", text, re.M):
            assert rule not in found, f"rule {rule} is defined twice"
            found[rule] = (path.parent / script).resolve().relative_to(ROOT).as_posix()
    return found


def test_the_snakefile_is_a_table_of_contents():
    """Rules live in rules/<stage>.smk; the Snakefile holds only the includes and the three targets."""
    text = (ROOT / "Snakefile").read_text(encoding="utf-8")
    assert set(re.findall(r"^rule (\w+):", text, re.M)) == {"all", "data", "anchors"}
    included = set(re.findall(r'^include: "(rules/[\w.]+\.smk)"', text, re.M))
    assert included == {p.relative_to(ROOT).as_posix() for p in (ROOT / "rules").glob("*.smk")}
    assert len(rule_scripts()) >= 14


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """module -> the `scripts.*` modules it imports anywhere (function-level imports included)."""
    modules = {module_name(p): p for p in SCRIPTS.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            named = []
            if isinstance(node, ast.Import):
                named = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                named = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            edges.update(m for m in named if m in modules and m != name and not name.startswith(m + "."))
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and (SCRIPTS / parts[1]).is_dir()) else "(top)"


def test_top_of_scripts_holds_only_rule_entry_scripts():
    top = {p.relative_to(ROOT).as_posix() for p in SCRIPTS.glob("*.py") if p.name != "__init__.py"}
    assert top == set(rule_scripts().values())
    for script in top:
        lines = (ROOT / script).read_text(encoding="utf-8").splitlines()
        assert len(lines) <= 30, f"{script} has {len(lines)} lines: a rule's entry script stays thin"


def test_each_rule_script_is_named_after_its_rule():
    for rule, script in rule_scripts().items():
        expected = "gen_c13_precomputed" if rule == "precomputed" else rule  # the course's naming convention
        assert Path(script).stem == expected, (rule, script)


def test_every_package_says_what_it_owns_and_must_not_do():
    packages = [p for p in SCRIPTS.iterdir() if p.is_dir() and (p / "__init__.py").is_file()]
    assert {p.name for p in packages} >= {"common", "model", "record", "page", "tokens", "bench", "lesson", "audit"}
    for pkg in packages:
        doc = ast.get_docstring(ast.parse((pkg / "__init__.py").read_text(encoding="utf-8")))
        assert doc and len([line for line in doc.splitlines() if line.strip()]) >= 2, pkg.name


def allowed_imports(pkg: Path) -> set[str]:
    """The packages a package's docstring lets it import: its line `May import: a, b.` (or `nothing.`)."""
    doc = ast.get_docstring(ast.parse((pkg / "__init__.py").read_text(encoding="utf-8"))) or ""
    found = re.search(r"^May import: (.+)\.$", doc, re.M)
    assert found, f"scripts/{pkg.name}/__init__.py: no 'May import: ...' line"
    return set() if found[1] == "nothing" else {name.strip() for name in found[1].split(",")}


def package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        src = package_of(module)
        graph.setdefault(src, set()).update(package_of(t) for t in targets if package_of(t) != src)
    return graph


def test_every_package_imports_only_what_its_docstring_allows():
    graph = package_graph()
    for pkg in sorted(p for p in SCRIPTS.iterdir() if p.is_dir() and (p / "__init__.py").is_file()):
        allowed = allowed_imports(pkg)
        assert allowed <= {p.name for p in SCRIPTS.iterdir() if p.is_dir()}, (pkg.name, allowed)
        assert graph.get(pkg.name, set()) <= allowed, (pkg.name, graph.get(pkg.name, set()) - allowed)


def test_the_page_sits_on_top_and_common_at_the_bottom():
    """No package but the audit (and the rules' entry scripts) imports the page; common imports nothing."""
    graph = package_graph()
    assert {src for src, targets in graph.items() if "page" in targets} <= {"audit", "(top)"}
    assert graph.get("common", set()) == set()


def test_no_import_cycle_between_modules():
    assert find_cycle(import_graph()) is None


def test_no_import_cycle_between_packages():
    graph = package_graph()
    assert find_cycle(graph) is None, graph


def test_model_package_is_pure():
    """The math imports nothing else of the kit and touches no file."""
    for path in (SCRIPTS / "model").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        imported = {m for m in re.findall(r"^\s*(?:from|import) (scripts\.\w+)", text, re.M)}
        assert imported <= {"scripts.model"}, (path.name, imported)
        assert not re.search(r"\bopen\(|read_text|write_text|read_bytes|write_bytes", text), path.name


def test_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_each_name_is_defined_once():
    """The schedule ids as a list, and each schedule, lane and step-kind label, appear in scripts/common/names.json
    and nowhere else in code (Python, lesson.js, the rules, the page template): every other place reads them."""
    from scripts.common import names

    labels = {*names.SCHEDULE_LABELS.values(), *names.LANE_LABELS.values(), *names.STEP_KIND_LABELS.values()}
    code = [*SCRIPTS.rglob("*.py"), ROOT / "templates" / "lesson.js", *(ROOT / "templates" / "lesson").glob("*.js"),
            ROOT / "templates" / "index.html.j2",
            *(ROOT / "rules").glob("*.smk"), ROOT / "Snakefile"]
    ids = re.compile(r"""["']whole["'],\s*["']chunked["'],\s*["']disagg["']|whole\|chunked\|disagg""")
    for path in code:
        text = path.read_text(encoding="utf-8")
        assert not ids.search(text), f"{path.relative_to(ROOT)} lists the schedule ids itself"
        for label in labels:
            assert f'"{label}"' not in text and f"'{label}'" not in text, (path.relative_to(ROOT), label)
        assert not re.search(r"\bpolic(y|ies)\b", text), f"{path.relative_to(ROOT)}: a schedule is a 'schedule'"
    assert names.SCHEDULES == ("whole", "chunked", "disagg")  # the lesson's three, in the page's order


def test_the_snakefile_lists_every_rule_of_every_file_it_includes():
    """The Snakefile is the workflow's table of contents: beside each `include:` its comment (continued on the `#`
    lines below it) names every rule of that file, so a rule added to rules/*.smk without a line here fails."""
    lines = (ROOT / "Snakefile").read_text(encoding="utf-8").splitlines()
    included = {}
    for n, line in enumerate(lines):
        m = re.match(r'include: "(rules/[a-z_]+\.smk)"\s*#(.*)', line)
        if m:
            follow = []
            for x in lines[n + 1:]:
                if not x.startswith("#"):
                    break
                follow.append(x[1:])
            included[m.group(1)] = " ".join([m.group(2), *follow])
    files = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "rules").glob("*.smk"))
    assert sorted(included) == files  # every rule file is included, with a comment
    for rel, comment in included.items():
        rules = re.findall(r"^rule ([A-Za-z_0-9]+):", (ROOT / rel).read_text(encoding="utf-8"), re.M)
        named = set(re.findall(r"[A-Za-z_0-9]+", comment))
        assert [r for r in rules if r not in named] == [], rel


def test_one_off_investigations_are_imported_by_nothing_else():
    """scripts/realengine/investigations/ holds commands run by hand; no other module (the pipeline, the pages, the
    analyses) imports them, so they can be read, and deleted, apart."""
    inside = "scripts.realengine.investigations"
    users = {src for src, targets in import_graph().items() for t in targets
             if t.startswith(inside) and not src.startswith(inside)}
    assert users == set()


MODULE_LINES = 400  # a module a newcomer reads in one sitting (issue 79)
FUNCTION_LINES = 80


def test_no_module_over_400_lines_and_no_function_over_80():
    """Every Python module under scripts/ and every JavaScript source under templates/ is at most MODULE_LINES lines,
    and every Python function at most FUNCTION_LINES: a longer one is split by what it does."""
    sources = [*SCRIPTS.rglob("*.py"), *(ROOT / "templates").rglob("*.js")]
    long_modules = {p.relative_to(ROOT).as_posix(): n for p in sources
                    if (n := len(p.read_text(encoding="utf-8").splitlines())) > MODULE_LINES}
    assert not long_modules, f"modules over {MODULE_LINES} lines: {long_modules}"
    long_functions = {}
    for p in SCRIPTS.rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and node.end_lineno - node.lineno + 1 > FUNCTION_LINES:
                long_functions[f"{p.relative_to(ROOT).as_posix()}:{node.name}"] = node.end_lineno - node.lineno + 1
    assert not long_functions, f"functions over {FUNCTION_LINES} lines: {long_functions}"
