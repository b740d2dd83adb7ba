"""The harness: what measures the real engine on this machine. llama.cpp's `llama-server` built from the pinned sdist
(build), the seeded GGUF model written here (model), the kit's streaming client (client), the prefix-reuse and
held-out workloads it sends (prefix_load, heldout), and `make bench-serving-real`'s command (run), which writes the
committed runs under precomputed/serve*/. The only part of the kit that starts a server."""
