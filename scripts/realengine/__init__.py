"""A real serving engine measured on this machine (issue 26): llama.cpp's `llama-server` built from the pinned
PyPI sdist (`build`), a seeded random-weight llama model written as GGUF (`model`), the kit's streaming client
(`client`: Poisson arrivals, per-chunk times, vLLM's `--save-detailed` result layout), the step-time calibration
(`calibrate`) and the comparison of the simulator's prediction with the measured runs (`predict`). Everything
here reads config/real_engine.json; nothing is downloaded but the pinned sdist.
May import: common, record, serving, tokens, bench.
"""
