"""config/prefix.json and its workloads (scripts/serving/workloads/workload.py shared_system_prompts, conversations;
scripts/serving/experiments/prefix_runs.py load): what each request's prompt holds, that a seed fixes the requests, and
that a bad file is refused in one line naming the field."""
import json

import numpy as np
import pytest

from scripts.record.inputs import InputError
from scripts.serving.experiments import prefix_runs
from scripts.serving.workloads.workload import SYSTEM, TURN, conversations, shared_system_prompts
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def doc():
    return prefix_runs.load(ROOT / "config" / "prefix.json")


def test_each_request_is_one_shared_system_prompt_then_its_own_question(doc):
    spec = doc["workloads"]["system_prompt"]
    r = shared_system_prompts(spec, 400, 2.0, 5)
    segments, answers = r.contents()  # also checks that the segments add up to each prompt
    prefixes = spec["prefixes"]["value"]
    firsts = [s[0] for s in segments]
    assert {c - SYSTEM for c, _ in firsts} == set(range(len(prefixes)))  # every prefix is used
    assert all(n == prefixes[c - SYSTEM] for c, n in firsts)
    assert len({s[1][0] for s in segments}) == 400  # every question is its own
    assert answers == [-(i + 1) for i in range(400)]
    assert r.arrival_s[-1] == pytest.approx(400 / 2.0)  # sent as vLLM sends: the last at n / rate
    again = shared_system_prompts(spec, 400, 2.0, 5)
    assert again.segments == r.segments and np.array_equal(again.arrival_s, r.arrival_s)


def test_each_turn_resends_the_conversation_so_far(doc):
    spec = doc["workloads"]["multi_turn"]
    r, conv, turn = conversations(spec, 600, 1.0, 9)
    segments, answers = r.contents()
    assert np.all(np.diff(r.arrival_s) >= 0)
    by_turn = {(int(c), int(t)): i for i, (c, t) in enumerate(zip(conv, turn, strict=True))}
    checked = 0
    for (c, t), i in by_turn.items():
        assert segments[i][0] == (SYSTEM, spec["system_tokens"]["value"])
        assert len(segments[i]) == 2 + 2 * t  # system, t earlier questions and answers, the new question
        before = by_turn.get((c, t - 1))
        if before is not None:  # the earlier turn's prompt, its answer (as long as it was), then the new question
            assert segments[i][:-2] == segments[before]
            assert segments[i][-2] == (answers[before], int(r.output_tokens[before]))
            assert r.arrival_s[i] >= r.arrival_s[before]
            checked += 1
    assert checked > 300
    assert all(a >= TURN for a in answers)
    lo, hi = spec["turns"]["min"], spec["turns"]["max"]
    assert 0 <= turn.min() and turn.max() <= hi - 1 and lo >= 1


@pytest.mark.parametrize("edit, field", [
    (lambda d: d["workloads"]["multi_turn"]["turns"].update(min=9, max=3), "workloads.multi_turn.turns.min"),
    (lambda d: d["experiment"]["rates"].update(value=[2, 1]), "experiment.rates.value"),
    (lambda d: d["workloads"]["system_prompt"]["prefixes"].update(value=[]), "workloads.system_prompt.prefixes.value"),
    (lambda d: d["experiment"]["schedule"].update(value="orca"), "experiment.schedule.value"),
    (lambda d: d["workloads"]["multi_turn"]["think_time_s"].pop("assumption"), "workloads.multi_turn.think_time_s"),
])
def test_a_bad_prefix_config_is_refused_in_one_line(tmp_path, edit, field):
    d = json.loads((ROOT / "config" / "prefix.json").read_text(encoding="utf-8"))
    edit(d)
    path = tmp_path / "prefix.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    with pytest.raises(InputError) as err:
        prefix_runs.load(path)
    message = str(err.value)
    assert "\n" not in message and str(path.as_posix()) in message and field in message, message
