"""The lab page's experiments in Chromium, as a student runs them: the model in the page is TinyGPT (the same
check as tests/test_lab_model.py, here in the browser), every experiment finishes within its bound at 1280 and
390 px with no console error, and the load experiment's metrics, recomputed by scripts/serving/metrics.py from the
timestamps the page took, agree within 1e-9."""
import time

import pytest

from scripts.bench.seeded_weights import seeded_model
from scripts.page.lab import lab_settings
from tests.browser import open_page
from tests.conftest import ROOT
from tests.test_lab_model import GREEDY_FN, assert_same_model, python_metrics

pytestmark = pytest.mark.browser
SETTINGS = lab_settings(ROOT / "config" / "lab.json")


SITE = ROOT / "site"  # the published site (make test's staleness build has just checked it)


@pytest.fixture(scope="module")
def lab_url():
    return (SITE / "lab.html").as_uri()


def test_the_model_in_chromium_is_tinygpt(browser, lab_url):
    """The parity check of tests/test_lab_model.py, run by the page's own script in Chromium."""
    page = browser.new_page()
    page.goto(lab_url)
    page.wait_for_function("typeof c13LabModel === 'function'")
    runs = page.evaluate(f"() => ({GREEDY_FN})(c13LabModel())")
    page.close()
    assert_same_model(runs, seeded_model())


def run(page, exp: str, button: int = 0, timeout_s: float = 60) -> float:
    """Click the experiment's button; wait until it says it is done; the seconds it took."""
    box = page.locator(f"#{exp}")
    box.scroll_into_view_if_needed()
    before = box.get_attribute("data-done") or "0"
    t = time.monotonic()
    box.locator("button").nth(button).click()
    page.wait_for_function(f"(document.getElementById('{exp}').dataset.done || '0') !== '{before}'",
                           timeout=timeout_s * 1000)
    return time.monotonic() - t


def filled(page, selector: str) -> list[str]:
    return [t.strip() for t in page.locator(selector).all_inner_texts()]


def check_load_metrics(page):
    last = page.evaluate("() => document.getElementById('exp-load').lastRun")
    assert last["requests"], "the load run completed no request"
    py = python_metrics(last["requests"], last["duration"], last["slo"])
    for k, v in py.items():
        if k != "failed" and v is not None:
            assert last["metrics"][k] == pytest.approx(v, rel=1e-9, abs=1e-12), k


def test_every_experiment_runs_at_1280(browser, lab_url):
    page, watch = open_page(browser, lab_url, width=1280)
    assert run(page, "exp-batch") < 20
    ms = filled(page, "#exp-batch td.ms")
    assert len(ms) == len(SETTINGS["batch"]["sizes"]) and all(float(x) > 0 for x in ms)
    seconds = run(page, "exp-kv")
    assert seconds < SETTINGS["kv"]["budget_s"] * 1.5  # the budget, plus the untimed warm-up pair of a length
    ratios = filled(page, "#exp-kv td.ratio")
    assert all(x.endswith("×") and float(x[:-1]) > 1 for x in ratios), ratios  # the cache pays on any CPU
    assert run(page, "exp-load") < SETTINGS["load"]["budget_s"] + 5
    check_load_metrics(page)
    assert len(filled(page, "#exp-load .runs tbody tr")) == 1
    assert watch.errors == []
    assert all(u.startswith("file://") or u.startswith("blob:") or u.startswith("data:") for u in watch.requests)
    page.close()


def test_the_experiments_run_on_a_phone(browser, lab_url):
    """390 px: the batch and load experiments (the KV run at 390: the exhaustive case below), nothing wider than
    the screen, no console error."""
    page, watch = open_page(browser, lab_url, width=390, height=844)
    assert run(page, "exp-batch") < 20
    assert run(page, "exp-load") < SETTINGS["load"]["budget_s"] + 5
    check_load_metrics(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert watch.errors == []
    page.close()


@pytest.mark.exhaustive
def test_the_kv_experiment_and_the_sweep_run_on_a_phone(browser, lab_url):
    """The KV-cache run and the three-rate sweep at 390 px. Guarded in make test by
    test_every_experiment_runs_at_1280 (the same code at another width) and test_the_experiments_run_on_a_phone."""
    page, watch = open_page(browser, lab_url, width=390, height=844)
    assert run(page, "exp-kv") < SETTINGS["kv"]["budget_s"] * 1.5
    run(page, "exp-load", button=1, timeout_s=150)
    rows = page.locator("#exp-load .runs tbody tr")
    page.wait_for_function(f"document.querySelectorAll('#exp-load .runs tbody tr').length === "
                           f"{len(SETTINGS['load']['sweep_rates'])}", timeout=150000)
    assert rows.count() == len(SETTINGS["load"]["sweep_rates"])
    assert watch.errors == []
    page.close()
