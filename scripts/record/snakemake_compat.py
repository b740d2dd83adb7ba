"""Work-arounds for the Snakemake the kit pins (requirements.txt), applied by the Snakefile and nothing else.

Snakemake 9.27.1 runs a `script:` file as ``"{py_exec} {fname:q}"`` with ``py_exec = sys.executable`` left
unquoted (snakemake/script.py, ``PythonScript.execute_script``), so a checkout whose path holds a space or a shell
character (``/home/me/my kit/.venv/bin/python``) fails every rule with "No such file or directory" (exit 127).
The script file name is already quoted; this quotes the interpreter the same way.
"""
from __future__ import annotations

import shlex


def quote_script_interpreter() -> None:
    """Make Snakemake quote the Python interpreter it runs `script:` files with (idempotent)."""
    from snakemake.script import PythonScript

    original = PythonScript._execute_cmd
    if getattr(original, "_c13_quotes_interpreter", False):
        return

    def execute_cmd(self, cmd, **kwargs):
        if "py_exec" in kwargs and "{py_exec}" in cmd:
            kwargs["py_exec"] = shlex.quote(kwargs["py_exec"])
        return original(self, cmd, **kwargs)

    execute_cmd._c13_quotes_interpreter = True
    PythonScript._execute_cmd = execute_cmd
