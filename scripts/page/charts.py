"""Vega-Lite specs (via Altair) for the lesson's charts. Data arrive by name from the page's JS, so the
specs hold no numbers of their own beyond the slider defaults they are given."""
from __future__ import annotations

import altair as alt

from scripts.common import names

W, V = names.CHART_WORDS, names.CHART_VALUES  # every word a chart shows, and the category values lesson.js computes
FONT = "Noto Sans CJK SC, PingFang SC, Microsoft YaHei, sans-serif"
LEGEND = alt.Legend(orient="bottom", columns=2)  # two columns fit a 390 px phone
SVG, CANVAS = "svg", "canvas"  # the renderer a chart's page view uses (spec usermeta.renderer, read by lesson.js)


def _config(chart: alt.TopLevelMixin, width: int = 560, renderer: str = SVG) -> dict:
    """The page's spec. A chart whose marks a slider moves draws on a canvas; a canvas has no accessibility tree,
    so its per-mark ARIA descriptions (a formatted string per point, rebuilt at every re-encode: the scatter's
    2,000 per rate move) are not generated: the chart's box carries its role and label instead."""
    config = {"font": FONT, **({"aria": False} if renderer == CANVAS else {})}
    spec = chart.properties(width="container" if width == 0 else width, usermeta={"renderer": renderer}).configure(
        **config).configure_view(stroke=None).to_dict()
    spec.pop("$schema", None)
    return spec


def _prefixed(words: str, expression: str) -> str:
    """A Vega expression: `words` (a string literal) before the expression's value."""
    if "'" in words or "\\" in words:
        raise ValueError(f"scripts/common/names.json: charts: {words!r} may not hold a quote or a backslash")
    return f"'{words}' + {expression}"


def frontier(batch: int, context_tokens: int, tpot_slo_ms: float) -> dict:
    batch_p = alt.param(name="batch", value=batch)
    ctx_p = alt.param(name="context_tokens", value=context_tokens)
    slo_p = alt.param(name="tpot_slo_ms", value=tpot_slo_ms)
    data, w = alt.Data(name="frontier"), W["frontier"]
    x = alt.X("throughput_tok_s:Q", title=w["x"])
    y = alt.Y("step_ms:Q", title=w["y"], scale=alt.Scale(zero=False))
    tips = [alt.Tooltip("batch:Q", title=w["tip_batch"]), alt.Tooltip("step_ms:Q", title=w["tip_step"], format=".1f"),
            alt.Tooltip("throughput_tok_s:Q", title=w["tip_throughput"], format=",.0f")]
    status = alt.Scale(domain=[V["slo_met"], V["slo_missed"]], range=["#4c78a8", "#bbbbbb"])
    curve = alt.Chart(data).mark_line(point=alt.OverlayMarkDef(size=18), color="#4c78a8").encode(
        x=x, y=y, tooltip=tips, color=alt.Color("slo_status:N", title=w["legend"], scale=status, legend=LEGEND))
    slo = alt.Chart(data).mark_rule(color="#d62728", strokeDash=[6, 4]).encode(
        y=alt.Y("slo:Q")).transform_aggregate(n="count()").transform_calculate(slo="tpot_slo_ms")
    current = alt.Chart(data).mark_point(size=220, filled=True, color="#ff7f0e", opacity=1).encode(
        x=x, y=y, tooltip=tips).transform_filter("datum.batch == batch")
    cap = alt.Chart(data).mark_text(align="right", dx=-8, dy=-10, color="#555").encode(
        x=x, y=y, text=alt.Text("label:N")).transform_filter("datum.is_cap").transform_calculate(
        label=_prefixed(w["cap_label"], "datum.batch"))
    # A mixture of experts' knee (rows with is_knee; none on a dense model's page): past it a step reads nearly every
    # expert, so more requests add KV reads only
    knee = alt.Chart(data).mark_point(size=90, shape="diamond", filled=True, color="#54a24b").encode(
        x=x, y=y).transform_filter("datum.is_knee")
    knee_label = alt.Chart(data).mark_text(align="right", dx=-6, dy=16, color="#54a24b").encode(
        x=x, y=y, text=alt.Text("label:N")).transform_filter("datum.is_knee").transform_calculate(
        label=_prefixed(w["knee_label"], "datum.batch"))
    # The technique switched on (lesson.js techniqueFrontierRows; empty for the baseline): its own frontier, dashed
    technique = alt.Data(name="frontier_technique")
    other = alt.Chart(technique).mark_line(point=alt.OverlayMarkDef(size=14, filled=False), color="#e45756",
                                           strokeDash=[5, 3]).encode(
        x=x, y=y, tooltip=[alt.Tooltip("label:N", title=w["tip_technique"]), *tips])
    other_cap = alt.Chart(technique).mark_text(align="right", dx=-4, dy=14, color="#e45756").encode(
        x=x, y=y, text=alt.Text("label:N")).transform_filter("datum.is_cap")
    layers = (curve, other, slo, knee, current, cap, knee_label, other_cap)
    chart = alt.layer(*layers).add_params(batch_p, ctx_p, slo_p).properties(
        height=320, title=w["title"])
    return _config(chart, width=0, renderer=CANVAS)


def timeline(prompt_tokens: int, chunk_tokens: int) -> dict:
    prompt_p = alt.param(name="prompt_tokens", value=prompt_tokens)
    chunk_p = alt.param(name="chunk_tokens", value=chunk_tokens)
    lanes, w = list(names.LANE_LABELS.values()), W["timeline"]
    bars = alt.Chart(alt.Data(name="timeline")).mark_bar(stroke="white", strokeWidth=0.4, height=22).encode(
        x=alt.X("start_s:Q", title=w["x"]),
        x2="end_s:Q",
        y=alt.Y("lane_label:N", title=None, sort=lanes),
        color=alt.Color("kind_label:N", title=w["legend"], scale=alt.Scale(
            domain=list(names.STEP_KIND_LABELS.values()), range=list(names.STEP_KIND_COLORS.values())), legend=LEGEND),
        tooltip=[alt.Tooltip("lane_label:N", title=w["tip_lane"]), alt.Tooltip("kind_label:N", title=w["tip_kind"]),
                 alt.Tooltip("start_s:Q", title=w["tip_start"], format=".3f"),
                 alt.Tooltip("duration_ms:Q", title=w["tip_duration"], format=".1f")],
    )
    chart = bars.add_params(prompt_p, chunk_p).properties(
        height=200, title=w["title"])
    return _config(chart, width=0, renderer=CANVAS)


def tokens(counts: dict) -> dict:
    """Grouped bars: tokens per passage under each tokenizer (static data from tokenizer_counts.json)."""
    labels = {tid: t["label"] for tid, t in counts["tokenizers"].items()}
    rows = [{"passage": counts["passage_titles"][r["passage_id"]], "tokenizer": labels[r["tokenizer_id"]],
             "tokens": r["tokens"], "chars": r["chars"]} for r in counts["rows"]]
    order = [labels[t] for t in counts["tokenizer_order"]]
    chart = alt.Chart(alt.Data(values=rows)).mark_bar().encode(
        x=alt.X("tokens:Q", title=W["tokens"]["x"]),
        y=alt.Y("passage:N", title=None, sort=list(counts["passage_titles"].values())),
        yOffset=alt.YOffset("tokenizer:N", sort=order),
        color=alt.Color("tokenizer:N", title=W["tokens"]["legend"], sort=order, legend=LEGEND),
        tooltip=["passage:N", "tokenizer:N", "tokens:Q", "chars:Q"],
    ).properties(height=260, title=W["tokens"]["title"])
    return _config(chart, width=0)


def bench(merged: dict) -> dict:
    """Two charts from the measured records: total time by length, and step latency by position."""
    if not merged["machines"]:
        return {}
    w = W["bench"]
    modes = {True: w["kv_cache"], False: w["no_cache"]}
    totals, steps = [], []
    for m in merged["machines"]:
        label = f"{m['machine']['cpu']} ({m['machine']['device']})"
        for r in m["rows"]:
            totals += [{"machine": label, "mode": modes[kv], "new_tokens": r["new_tokens"],
                        "ms": r["kv_median_s" if kv else "nokv_median_s"] * 1e3} for kv in (True, False)]
        for key, kv in (("kv_cache", True), ("no_cache", False)):
            trace = m["per_step"][key]
            steps += [{"machine": label, "mode": modes[kv], "position": p, "ms": v}
                      for p, v in zip(trace["positions"], trace["median_ms"], strict=True)]
    color = alt.Color("mode:N", title=None, legend=LEGEND)
    total = alt.Chart(alt.Data(values=totals)).mark_line(point=True).encode(
        x=alt.X("new_tokens:Q", title=w["total_x"], scale=alt.Scale(type="log", base=2)),
        y=alt.Y("ms:Q", title=w["total_y"]), color=color,
        strokeDash=alt.StrokeDash("machine:N", title=w["machine"]),
        tooltip=["machine:N", "mode:N", "new_tokens:Q", alt.Tooltip("ms:Q", format=".1f")],
    ).properties(height=240, title=w["total_title"])
    step = alt.Chart(alt.Data(values=steps)).mark_line().encode(
        x=alt.X("position:Q", title=w["steps_x"]), y=alt.Y("ms:Q", title=w["steps_y"]), color=color,
        strokeDash=alt.StrokeDash("machine:N", title=w["machine"]),
        tooltip=["machine:N", "mode:N", "position:Q", alt.Tooltip("ms:Q", format=".2f")],
    ).properties(height=240, title=w["steps_title"])
    return {"bench_total": _config(total, width=0), "bench_steps": _config(step, width=0)}


LOG_AXIS = alt.Axis(labelOverlap="greedy", labelSeparation=6, tickCount=5)  # 390 px: no labels on top of each other
SCHEDULE_COLORS = alt.Scale(domain=list(names.SCHEDULE_LABELS.values()), range=list(names.SCHEDULE_COLORS.values()))


def load_attainment(target: float, rate: float) -> dict:
    """SLO attainment against the rate per GPU, one line per schedule; the target; each schedule's goodput; the
    rate the table below is read at (a vertical rule that follows the request-rate slider)."""
    target_p = alt.param(name="attainment_target", value=target)
    rate_p = alt.param(name="request_rate", value=rate)
    w = W["load_attain"]
    color = alt.Color("schedule:N", title=w["legend"], scale=SCHEDULE_COLORS, legend=LEGEND)
    x = alt.X("rate:Q", title=w["x"])
    lines = alt.Chart(alt.Data(name="load_attain")).mark_line(point=alt.OverlayMarkDef(size=20)).encode(
        x=x, y=alt.Y("attainment:Q", title=w["y"], axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
        color=color, tooltip=[alt.Tooltip("schedule:N", title=w["tip_schedule"]),
                              alt.Tooltip("rate:Q", title=w["tip_rate"]),
                              alt.Tooltip("attainment:Q", title=w["tip_attainment"], format=".1%")])
    rule = alt.Chart(alt.Data(name="load_attain")).mark_rule(color="#d62728", strokeDash=[6, 4]).encode(
        y="t:Q").transform_aggregate(n="count()").transform_calculate(t="attainment_target")
    marks = alt.Chart(alt.Data(name="load_goodput")).mark_point(shape="diamond", size=160, filled=True,
                                                                   stroke="black", strokeWidth=0.8).encode(
        x="goodput_rate:Q", y="target:Q", color=alt.Color("schedule:N", scale=SCHEDULE_COLORS, legend=None),
        tooltip=[alt.Tooltip("schedule:N", title=w["tip_schedule"]),
                 alt.Tooltip("goodput_rate:Q", title=w["tip_goodput"], format=".2f")])
    now = alt.Chart(alt.Data(name="load_attain")).mark_rule(color="#555", strokeDash=[2, 3]).encode(
        x="r:Q", tooltip=[alt.Tooltip("r:Q", title=w["tip_now"])]).transform_aggregate(
        n="count()").transform_calculate(r="request_rate")
    chart = alt.layer(lines, rule, now, marks).add_params(target_p, rate_p).properties(
        height=260, title=alt.TitleParams(w["title"], subtitle=w["subtitle"]))
    return _config(chart, width=0, renderer=CANVAS)


def load_distribution(metric: str, slo_param: str, slo: float) -> dict:
    """One metric's distribution per schedule at the chosen rate: the share of requests at or below each latency,
    with mean, p50, p90 and p99 marked, and the SLO."""
    slo_p = alt.param(name=slo_param, value=slo)
    name, w = metric.upper(), W["load_distribution"]
    color = alt.Color("schedule:N", title=w["legend"], scale=SCHEDULE_COLORS, legend=LEGEND)
    x = alt.X("ms:Q", title=w["x"].format(metric=name), scale=alt.Scale(type="log"), axis=LOG_AXIS)
    curve = alt.Chart(alt.Data(name=f"load_{metric}_curve")).mark_line(interpolate="step-after").encode(
        x=x, y=alt.Y("share:Q", title=w["y"], axis=alt.Axis(format="%")), color=color)
    stats = alt.Chart(alt.Data(name=f"load_{metric}_stats")).mark_point(size=90, filled=True, opacity=1).encode(
        x=x, y="share:Q", color=alt.Color("schedule:N", scale=SCHEDULE_COLORS, legend=None),
        shape=alt.Shape("stat:N", title=w["shape_legend"], scale=alt.Scale(
            domain=[V["mean"], "p50", "p90", "p99"], range=["diamond", "circle", "square", "triangle-up"]),
                        legend=LEGEND),
        tooltip=[alt.Tooltip("schedule:N", title=w["tip_schedule"]), alt.Tooltip("stat:N", title=w["tip_stat"]),
                 alt.Tooltip("ms:Q", title=w["tip_ms"], format=",.1f")])
    rule = alt.Chart(alt.Data(name=f"load_{metric}_curve")).mark_rule(color="#d62728", strokeDash=[6, 4]).encode(
        x="slo:Q").transform_aggregate(n="count()").transform_calculate(slo=slo_param)
    chart = alt.layer(curve, stats, rule).add_params(slo_p).properties(
        height=230, title=w["title"].format(metric=name))
    return _config(chart, width=0, renderer=CANVAS)


def load_scatter(ttft_slo: float, tpot_slo: float) -> dict:
    """Every request of one schedule at the chosen rate as a point (TTFT, TPOT), the SLO box, inside and outside
    coloured. The axes' domains are signals set from the requests, so an SLO move redraws the box and re-colours
    only the points that changed side, instead of re-laying out every point."""
    params = [alt.param(name="ttft_slo_ms", value=ttft_slo), alt.param(name="load_tpot_slo_ms", value=tpot_slo),
              alt.param(name="scatter_x", value=[10, 10000]), alt.param(name="scatter_y", value=[10, 100])]
    x_scale = alt.Scale(type="log", domain=alt.ExprRef("scatter_x"), nice=False)  # the box starts at the axes
    y_scale = alt.Scale(type="log", domain=alt.ExprRef("scatter_y"), nice=False)
    box = alt.Chart(alt.Data(name="load_box")).mark_rect(
        fill="#4c78a8", opacity=0.08, stroke="#4c78a8", clip=True).encode(
        x=alt.X("x1:Q", scale=x_scale), x2="x2:Q", y=alt.Y("y1:Q", scale=y_scale), y2="y2:Q").transform_calculate(
        x2="max(ttft_slo_ms, datum.x1)", y2="max(load_tpot_slo_ms, datum.y1)")  # below the data: no box
    w = W["load_scatter"]
    points = alt.Chart(alt.Data(name="load_points")).mark_point(size=14, filled=True, opacity=0.6, invalid=None).encode(
        x=alt.X("ttft_ms:Q", title=w["x"], scale=x_scale, axis=LOG_AXIS),
        y=alt.Y("tpot_ms:Q", title=w["y"], scale=y_scale, axis=LOG_AXIS),
        color=alt.Color("inside:N", title=w["legend"], scale=alt.Scale(domain=[V["both_met"], V["not_both"]],
                                                                         range=["#4c78a8", "#e45756"]), legend=LEGEND))
    # no tooltip: 2,000 tooltip objects per rate change cost a fifth of the chart's update
    chart = alt.layer(box, points).add_params(*params).properties(
        height=300, title=w["title"])
    return _config(chart, width=0, renderer=CANVAS)
