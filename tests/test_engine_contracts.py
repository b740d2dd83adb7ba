"""The engine's three parts have written contracts (scripts/serving/engine/contracts.py): every member the loop, the
P/D side and simulate() use of a scheduler, a KV manager or a step-cost model (and its pricing) is declared there,
every registered class has every declared member, and no part reads the loop."""
import ast

import numpy as np
import pytest

from scripts.model import roofline as rl
from scripts.serving import engine
from scripts.serving.engine import contracts, kv, stepcost
from tests.conftest import ROOT

PACKAGE = ROOT / "scripts" / "serving" / "engine"
CALLERS = ("loop.py", "iteration_time.py", "disagg.py", "simulation.py")  # the modules that ask the parts
# the names by which a caller holds each part: `self.kv` or a local `kv`, and so on
HOLDERS = {"kv": contracts.PreemptingKVContract, "scheduler": contracts.SchedulerContract,
           "step": contracts.StepCostContract, "pricing": contracts.PricingContract}


def members(contract) -> set[str]:
    """What a contract declares, with what the contracts it extends declare: annotated attributes and methods."""
    found = set()
    for cls in contract.__mro__:
        if cls is object or not getattr(cls, "_is_protocol", False):
            continue
        found |= set(vars(cls).get("__annotations__", {}))
        found |= {n for n, v in vars(cls).items() if callable(v) and not n.startswith("_")}
    return found


def used_members(source: str) -> dict[str, set[str]]:
    """holder -> the attributes a module's code reads of it (`kv.fits`, `self.kv.fits`, `self.step.cost`)."""
    used: dict[str, set[str]] = {name: set() for name in HOLDERS}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Attribute):
            continue
        holder = node.value
        if isinstance(holder, ast.Attribute) and isinstance(holder.value, ast.Name) and holder.value.id == "self":
            name = holder.attr
        elif isinstance(holder, ast.Name):
            name = holder.id
        else:
            continue
        if name in used:
            used[name].add(node.attr)
    return used


def test_every_member_the_loop_uses_is_in_its_parts_contract():
    for module in CALLERS:
        for holder, names in used_members((PACKAGE / module).read_text(encoding="utf-8")).items():
            missing = names - members(HOLDERS[holder])
            assert not missing, f"{module} uses {sorted(missing)} of its {holder}, not declared in contracts.py"


def test_the_check_finds_an_undeclared_member():
    """The scan above fails on a loop that asks a part for something its contract does not declare."""
    used = used_members("def f(self):\n    self.kv.reserve_more(1)\n    kv = self.kv\n    kv.fits(0, 1, 0.0)\n")
    assert used["kv"] == {"reserve_more", "fits"}
    assert used["kv"] - members(contracts.PreemptingKVContract) == {"reserve_more"}


@pytest.fixture(scope="module")
def anchor():
    from scripts.serving.workloads import config
    a, _, _ = config.sweep_inputs(ROOT / "anchor-model.json", ROOT / "config" / "workloads.json")
    return a


def test_every_registered_part_has_every_member_of_its_contract(anchor):
    a = anchor
    prompt, output = np.array([100, 40]), np.array([20, 30])
    segments, answers = [[(1, 100)], [(2, 40)]], [10, 11]
    managers = {"reserved": kv.kv_manager(a, 1e12, None), "paged": kv.kv_manager(a, 1e12, kv.Memory()),
                "paged+apc": kv.kv_manager(a, 1e12, kv.Memory(), (segments, answers)),
                "reserved+slots": kv.kv_manager(a, 1e12, None, (segments, answers), n_slots=2)}
    assert set(managers) == set(engine.REGISTRIES["kv"])
    for name, manager in managers.items():
        manager.start(prompt, output)
        contract = contracts.PreemptingKVContract if manager.preempts else contracts.KVContract
        assert isinstance(manager, contract), name
        assert members(contract) <= set(dir(manager)), name
    for name, cls in engine.REGISTRIES["scheduler"].items():
        if name == "disagg.prefill":
            continue  # the P/D prefill side: disagg.PrefillPool runs it, not the loop
        rule = cls(8, 256, 64)
        assert members(contracts.SchedulerContract) <= set(dir(rule)), name
    fitted = type("Fit", (), {"seconds": lambda *_: 1.0, "decode_run": lambda _, d, s: np.ones(len(s))})()
    costs = {"roofline": stepcost.Roofline(a), "derated": stepcost.Derated(a, rl.achieved(a)),
             "measured": stepcost.Measured(a, fitted)}
    assert set(costs) == set(engine.REGISTRIES["step_cost"])
    for name, cost in costs.items():
        assert members(contracts.StepCostContract) <= set(dir(cost)), name
        assert members(contracts.PricingContract) <= set(dir(cost.pricing(managers["reserved"]))), name


def test_no_part_reads_the_loop():
    for module in ("kv.py", "schedulers.py", "stepcost.py", "prefix.py"):
        text = (PACKAGE / module).read_text(encoding="utf-8")
        assert "self.loop" not in text and "def bind" not in text, module
