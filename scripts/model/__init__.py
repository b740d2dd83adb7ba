"""The anchor model's math: the Anchor shape, its sizes (parameters, weight, KV and state bytes), roofline step
times, the long-prompt timeline, the page's readouts, and the earlier lessons' techniques as changes to one step
(techniques.py).

Pure functions of an `Anchor` and numbers: it reads no file, writes none, imports nothing else of `scripts`.
May import: nothing.
"""
