"""A real serving engine measured on this machine (issue 26): llama.cpp's `llama-server` built from the pinned
PyPI sdist (`build`), a seeded random-weight llama model written as GGUF (`model`), the kit's streaming client
(`client`: Poisson arrivals, per-chunk times, vLLM's `--save-detailed` result layout), the step-time calibration
(`calibrate`) into a step model (`stepmodel`: step times, the slots' ubatches and measured noise, which the
simulator prices through its step-cost interface), the simulator's prediction of one run (`predict`) and whether a
calibration applies to a run (`speed`), the comparison over every run, calibrating on one half of the rates and
predicting the other (`comparison`), and the page's records of it (`records`, a package: one module per family,
every word in its labels.json). The one-off commands whose figures config fields cite live in `investigations/`,
apart from the harness and the analyses. Everything here reads config/real_engine.json; nothing is downloaded but
the pinned sdist.
May import: common, model, record, serving, tokens, bench.
"""
