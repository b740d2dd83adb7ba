"""Metrics and results: a run's request metrics exactly as `vllm bench serve` computes them (metrics), a saved
result file read back (results), other clients' files in that layout (clients), and confidence intervals over
replications (uncertainty). Pure but for results' and clients' file reading."""
