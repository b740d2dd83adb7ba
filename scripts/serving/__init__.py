"""Serving under load: workloads and traces, an iteration-level simulator of the anchor (whole, chunked, P/D), and
the request metrics exactly as `vllm bench serve` computes them. Step times come only from scripts/model/roofline.py.

Folders by role:
  engine/       the simulation (one GPU's loop, its parts and their contracts; engine/__init__.py is the guide)
  workloads/    what is served: config/workloads.json read (config), seeded request streams (workload), traces
  measures/     metrics and results: vLLM's metrics, result files, other clients' files, replication intervals
  experiments/  the page experiments' math: under load (load_page), prefix caching (prefix_runs), the five tools
The modules at the top run and report: the default sweep (sweep) and its page data (aggregate; its engines block in
engines_page), the engine comparison on the command line (compare), the twin's constants and parity fixtures (twin,
parity), the CLI (__main__, progress), the simulator's benchmark (bench) and the records' words (labels). Everything is
pure (numbers in, numbers out) but the readers of files (workloads.trace, measures.results, measures.clients) and the
CLI.
May import: common, model, record.
"""
