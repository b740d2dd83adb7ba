"""The bottom of the kit: what every package may use — how a number is displayed (display) and the names the
code, the data and the page share (names: schedules, chart labels and colours, read from names.json beside it).

Pure and leaf: no lesson math, no file but its own data file, no other package of `scripts`.
May import: nothing.
"""
