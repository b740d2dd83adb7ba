# The record of a build: hashes of every input, script and output, and the tool versions.
# Paths in `script:` and `conda:` are relative to this file; inputs and outputs to the checkout.


rule manifest:
    input:
        data=[f"{PRE}/precomputed.json", f"{PRE}/tokenizer_counts.json", f"{PRE}/qwen35_conversion_proof.json",
              f"{PRE}/bench_medians.json", f"{PRE}/serving.json", f"{PRE}/measured_results.json",
              f"{PRE}/measured_vs_simulated_load.json", f"{PRE}/measured_vs_simulated_prefix.json", f"{PRE}/prefix.json",
              f"{PRE}/measured_vs_simulated_heldout.json", f"{PRE}/measured_records.json"],
        anchor=anchor_file,
        sources=["config/cited.json", "config/gpus.json", "config/tokenizers.json", "config/passages.json",
                 "config/workloads.json", "config/course.json", "config/prefix.json", "Snakefile", *RULE_FILES, "requirements.txt", *BENCH_RECORDS,
                 *SERVE_RESULTS, *SERVE_CALIBRATIONS, *SERVE_ARCHIVED_CALIBRATIONS, *SERVE_PREFIX_RESULTS, *SERVE_PREFIX_CALIBRATIONS,
                 *SERVE_HELDOUT_RESULTS, *SERVE_HELDOUT_CALIBRATIONS,
                 "config/real_engine.json"],
        helpers=sorted({f for s in ["scripts/gen_c13_precomputed.py", "scripts/fetch_tokenizer.py",
                                    "scripts/convert_qwen35.py", "scripts/verify_qwen35.py",
                                    "scripts/tokenizer_counts.py", "scripts/bench_medians.py",
                                    "scripts/simulate_cells.py", "scripts/simulate_goodput.py", "scripts/simulate_sweep.py",
                                    "scripts/simulate_engines.py", "scripts/measured_results.py", "scripts/simulate_prefix.py",
                                    "scripts/measured_vs_simulated_load.py", "scripts/measured_vs_simulated_prefix.py",
                                    "scripts/measured_vs_simulated_heldout.py", "scripts/measured_records.py",
                                    "scripts/realengine/harness/run.py",
                                    "scripts/manifest.py", "scripts/bench/kv_cache.py"] for f in code_inputs(s)}),
        code=code("scripts/manifest.py"),
    output:
        json=f"{PRE}/MANIFEST.json",
    log:
        "build/logs/{anchor}/manifest.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/manifest.py"
