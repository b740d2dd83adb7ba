"""Workloads and traces: config/workloads.json read and checked (config), seeded request streams (workload) and
request traces from CSV (trace): what the simulator is asked to serve."""
