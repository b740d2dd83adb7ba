"""C13-L5 lesson kit. Top level: one Snakemake entry script per rule. Libraries live in packages by role:
model (pure math), lesson (the data document), tokens, bench, page, record (I/O, provenance, audit)."""
