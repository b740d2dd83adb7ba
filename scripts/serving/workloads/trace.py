"""Read a request trace (CSV) into `Requests`, or fail with one line naming the file, the row and the column.

Two column sets are accepted:
  arrival_s,prompt_tokens,output_tokens          seconds from the start of the run
  TIMESTAMP,ContextTokens,GeneratedTokens        the public Azure LLM inference traces (2023/2024): TIMESTAMP is an
                                                 ISO 8601 date-time with any number of fractional digits (2023:
                                                 "2023-11-16 18:15:46.6805900"; 2024: "...00:00:00.009930+00:00");
                                                 zones are honoured (a stamp without one is UTC), and arrivals are
                                                 the differences from the earliest stamp, in seconds
Arrivals need not be sorted (they are sorted, stably) and lie within MAX_ARRIVAL_S of the run's start (past that a
float64 second no longer holds the microseconds an iteration's time needs, and the simulated times would collapse:
give arrivals relative to the trace's start); token counts must be positive integers, each request's prompt + output
must fit the model's context, each column is named once, and the file stays under MAX_ROWS rows and MAX_BYTES bytes.
`read_mooncake` reads the Mooncake JSON Lines layout, with each prompt's block hash ids (for prefix caching).
"""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from scripts.record.inputs import InputError, jsonl_objects, read_bytes
from scripts.serving.workloads.workload import Requests

MAX_ROWS = 1_000_000
MAX_ARRIVAL_S = 1e9  # about 31.7 years: a float64 near it still resolves 0.12 microseconds
MAX_BYTES = 200 * 1024 * 1024
OURS = ("arrival_s", "prompt_tokens", "output_tokens")
AZURE = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")


def read_trace(path: Path, max_context: int) -> Requests:
    name = Path(path).as_posix()
    try:
        text = read_bytes(path, MAX_BYTES).decode("utf-8-sig")  # regular files only, capped while reading
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: not UTF-8 (byte {exc.start})") from None
    header = next(iter(text.splitlines()), "")
    names = [c.strip().strip('"') for c in header.split(",")]
    twice = sorted({c for c in names if names.count(c) > 1 and c})
    if twice:  # pandas would read the second as "<name>.1" and use the first silently
        raise InputError(f"{name}: header names column {twice[0]} twice; name each column once")
    try:
        df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise InputError(f"{name}: not a CSV table ({str(exc).splitlines()[0][:100]})") from None
    cols = tuple(c.strip() for c in df.columns)
    df.columns = cols
    kind = next((k for k in (OURS, AZURE) if set(k) <= set(cols)), None)
    if kind is None:
        raise InputError(f"{name}: header must name {','.join(OURS)} or {','.join(AZURE)}; got {','.join(cols)[:80]}")
    if len(df) == 0:
        raise InputError(f"{name}: no requests")
    if len(df) > MAX_ROWS:
        raise InputError(f"{name}: {len(df)} rows, more than the {MAX_ROWS} allowed")
    t_col, p_col, o_col = kind
    arrivals = _arrivals(df[t_col], name, t_col, azure=kind is AZURE)
    prompts, outputs = _tokens(df[p_col], name, p_col), _tokens(df[o_col], name, o_col)
    over = np.flatnonzero(prompts + outputs > max_context)
    if len(over):
        r = int(over[0])
        raise InputError(f"{name}: row {r + 2} column {p_col}+{o_col}: {prompts[r] + outputs[r]} tokens, more than "
                         f"the model's context ({max_context})")
    order = np.argsort(arrivals, kind="stable")
    return Requests(arrivals[order], prompts[order], outputs[order])


def _arrivals(col: pd.Series, name: str, col_name: str, azure: bool) -> np.ndarray:
    if azure:
        # utc=True: offsets are applied and naive stamps read as UTC, so mixed zones compare. Differences go
        # through total_seconds(): pandas keeps the parsed resolution (s, us or ns), so raw integers have no fixed
        # unit (dividing them by 1e9 compressed whole-second and microsecond traces 1000x).
        stamps = pd.to_datetime(col, errors="coerce", format="ISO8601", utc=True)
        bad = np.flatnonzero(stamps.isna().to_numpy())
        if len(bad):
            _fail(name, bad[0], col_name, col.iloc[bad[0]], "an ISO 8601 date-time such as 2023-11-16 "
                  "18:15:46.6805900 or 2024-05-10 00:00:00.009930+00:00")
        seconds = (stamps - stamps.min()).dt.total_seconds().to_numpy(dtype=float)
        far = np.flatnonzero(seconds > MAX_ARRIVAL_S)
        if len(far):
            _fail(name, far[0], col_name, col.iloc[far[0]], f"within {MAX_ARRIVAL_S:g} s of the earliest stamp")
        return seconds
    values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(~np.isfinite(values) | (values < 0) | (values > MAX_ARRIVAL_S))
    if len(bad):
        _fail(name, bad[0], col_name, col.iloc[bad[0]], f"a number of seconds in [0, {MAX_ARRIVAL_S:g}] (arrivals "
              "are seconds from the run's start; past 1e9 s a float64 cannot hold an iteration's microseconds)")
    return values


def _tokens(col: pd.Series, name: str, col_name: str) -> np.ndarray:
    values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(~np.isfinite(values) | (values < 1) | (values != np.round(values)) | (values > 2**31))
    if len(bad):
        _fail(name, bad[0], col_name, col.iloc[bad[0]], "a positive whole number of tokens")
    return values.astype(np.int64)


def _fail(name: str, index: int, col: str, value: str, allowed: str) -> None:
    raise InputError(f"{name}: row {int(index) + 2} column {col}: {str(value)[:40]!r} is not {allowed}")


MOONCAKE_BLOCK = 512  # tokens per hash id in the Mooncake traces (FAST'25 artifact, mooncake_trace.jsonl)
MOONCAKE_FIELDS = ("timestamp", "input_length", "output_length", "hash_ids")


def read_mooncake(path: Path, max_context: int) -> tuple[Requests, list[list[tuple[int, int]]]]:
    """A trace in the Mooncake JSON Lines layout (kvcache-ai/Mooncake, FAST'25 traces): one object per line with
    exactly `timestamp` (integer milliseconds from the trace's start), `input_length` and `output_length` (tokens)
    and `hash_ids` (one integer per 512-token block of the prompt, the last block possibly partial; equal ids mean
    equal prefixes). Returns the requests (sorted by arrival, stably) and each one's prompt as segments
    (hash id, tokens) for scripts/serving/engine/prefix.py. Anything else is refused in one line naming the file,
    the line and the field."""
    name = Path(path).as_posix()
    rows = []
    for n, obj in jsonl_objects(path, MAX_BYTES, parse_constant=_no_constant):
        if len(rows) >= MAX_ROWS:
            raise InputError(f"{name}: more than the {MAX_ROWS} requests allowed")
        if not isinstance(obj, dict) or set(obj) != set(MOONCAKE_FIELDS):
            got = ",".join(sorted(obj)) if isinstance(obj, dict) else type(obj).__name__
            raise InputError(f"{name}: line {n}: needs exactly the fields {','.join(MOONCAKE_FIELDS)}; got {got[:80]}")
        rows.append((n, _mooncake_row(obj, name, n, max_context)))
    if not rows:
        raise InputError(f"{name}: no requests")
    stamps = np.array([r[0] for _, r in rows], dtype=np.int64)
    order = np.argsort(stamps, kind="stable")
    arrivals = (stamps - stamps.min()).astype(float) / 1000.0
    prompts = np.array([r[1] for _, r in rows], dtype=np.int64)
    outputs = np.array([r[2] for _, r in rows], dtype=np.int64)
    segments = [rows[i][1][3] for i in order]
    return Requests(arrivals[order], prompts[order], outputs[order], tuple(segments)), segments


def _no_constant(word: str):
    raise ValueError(f"{word} is not a number JSON allows")


def _mooncake_row(obj: dict, name: str, n: int, max_context: int) -> tuple:
    def whole(field, lo):
        v = obj[field]
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise InputError(f"{name}: line {n}: field {field}: {str(v)[:40]!r} is not a whole number >= {lo}")
        return v

    stamp, prompt, output = whole("timestamp", 0), whole("input_length", 1), whole("output_length", 1)
    if stamp / 1000.0 > MAX_ARRIVAL_S:
        raise InputError(f"{name}: line {n}: field timestamp: {stamp} ms is past {MAX_ARRIVAL_S:g} s")
    if prompt + output > max_context:
        raise InputError(f"{name}: line {n}: field input_length+output_length: {prompt + output} tokens, more than "
                         f"the model's context ({max_context})")
    ids = obj["hash_ids"]
    want = -(-prompt // MOONCAKE_BLOCK)
    if not isinstance(ids, list) or len(ids) != want:
        got = len(ids) if isinstance(ids, list) else type(ids).__name__
        raise InputError(f"{name}: line {n}: field hash_ids: {got} ids for input_length {prompt} (one per "
                         f"{MOONCAKE_BLOCK}-token block: {want})")
    if any(isinstance(h, bool) or not isinstance(h, int) or h < 0 for h in ids):
        raise InputError(f"{name}: line {n}: field hash_ids: every id must be a whole number >= 0")
    sizes = [MOONCAKE_BLOCK] * (want - 1) + [prompt - MOONCAKE_BLOCK * (want - 1)]
    return stamp, prompt, output, list(zip(ids, sizes, strict=True))
