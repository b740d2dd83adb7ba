"""The content-keyed memos (scripts/record/memo.py) change no output: a chart's compilation and drawn height are
read back equal to vl-convert's, a changed spec is converted again, a damaged memo is ignored; and the per-module
test seconds that order the workers (scripts/bench/test_seconds.py) are read from a JUnit report."""
import json

from scripts.bench.test_seconds import module_seconds
from scripts.page import charts, vega
from scripts.record import memo


def spec():
    return charts.timeline(4096, 512)


def test_a_charts_memo_gives_what_vl_convert_gives(tmp_path, monkeypatch):
    monkeypatch.setattr(memo, "MEMO", tmp_path)
    direct = vega.vl_convert.vegalite_to_vega(spec())
    direct.pop("$schema", None)
    first = vega.compile_specs({"timeline": spec()})
    assert first == {"timeline": direct}
    assert json.dumps(first) == json.dumps({"timeline": direct})  # the same key order: the page's bytes
    with monkeypatch.context() as m:  # read back: vl-convert is not called again
        m.setattr(vega.vl_convert, "vegalite_to_vega", lambda s: 1 / 0)
        assert vega.compile_specs({"timeline": spec()}) == first
    other = charts.timeline(8192, 512)
    assert vega.compile_specs({"timeline": other}) != first  # another spec, another memo
    assert len(list((tmp_path / vega.CONVERTED).iterdir())) == 2


def test_a_damaged_memo_is_computed_again(tmp_path, monkeypatch):
    monkeypatch.setattr(memo, "MEMO", tmp_path)
    compiled = vega.compile_specs({"timeline": spec()})
    height = vega.chart_boxes(compiled, {})["timeline"]
    assert 100 < height < 1000
    for path in (tmp_path / vega.CONVERTED).iterdir():
        path.write_text('{"value": ', encoding="utf-8")  # half written (a memo is written by rename: never, but)
    assert vega.chart_boxes(compiled, {})["timeline"] == height
    assert vega.compile_specs({"timeline": spec()}) == compiled
    for path in (tmp_path / vega.CONVERTED).iterdir():
        assert json.loads(path.read_text(encoding="utf-8")).keys() == {"value"}  # rewritten whole


def test_memo_keys_do_not_collide_across_part_boundaries():
    assert memo.key("ab", "c") != memo.key("a", "bc")
    assert memo.key("ab", "c") == memo.key("ab", "c")


def test_module_seconds_sum_each_modules_cases(tmp_path):
    report = tmp_path / "junit.xml"
    report.write_text("""<testsuites><testsuite>
      <testcase classname="tests.test_a" name="x" time="1.25"/>
      <testcase classname="tests.test_a" name="y" time="2.5"/>
      <testcase classname="tests.test_b.TestGroup" name="z" time="0.4"/>
      <testcase classname="elsewhere.test_c" name="w" time="9"/>
    </testsuite></testsuites>""", encoding="utf-8")
    assert module_seconds(report) == {"test_a": 3.8, "test_b": 0.4}
