"""One-off investigations of the real engine, each a command whose figures a config field or a docstring cites
(as Vidur keeps its profiling apart from the simulator): `joins` (when a request joins the decode batch),
`layouts` (the slots' ubatches on and off against the held-out runs), `slot_sweep` (a step's time by which slots
its decoders hold), `stretches` (long steps in the calibration), `tile_sweep` (llama.cpp's attention tile at 64
query rows) and `rescale_check` (what `--rescale` does to the held-out errors). Nothing in the pipeline imports
them; they import the harness and the analyses above them.
"""
