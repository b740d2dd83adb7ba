"""A real serving engine measured on this machine (issue 26), the simulator's predictions of it and the page's records
of both, in folders by role:
  harness/         what measures: llama-server built from the pinned PyPI sdist (`build`), a seeded random-weight
                   llama model written as GGUF (`model`), the kit's streaming client (`client`: Poisson arrivals,
                   per-chunk times, vLLM's `--save-detailed` layout), the prefix-reuse and held-out workloads
                   (`prefix_load`, `heldout`) and `make bench-serving-real` (`run`);
  analyses/        from the committed runs to predictions: the step-time calibration (`calibrate`, fitting with
                   `stepfit`) into a step model (`stepmodel`: step times, the slots' ubatches, measured noise, priced
                   through the simulator's step-cost interface), whether a calibration applies (`speed`), one run's
                   prediction (`predict`) and how far it is from the measurement (`accuracy`),
                   and the three families over one pattern (`family`): load cells (`comparison`), prefix reuse
                   (`prefix_comparison`), held-out cells (`heldout_comparison`);
  records/         the page's records and words of each family (every word in its labels.json);
  investigations/  one-off commands whose figures config fields cite.
Committed runs name their client as they were written (`scripts/realengine/client.py` before the harness folder):
their files are measurements and are not rewritten. Everything here reads config/real_engine.json; nothing is
downloaded but the pinned sdist.
May import: common, model, record, serving, tokens, bench.
"""
