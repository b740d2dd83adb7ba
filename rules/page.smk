# The page: the pinned Vega runtime and the rendered static site.
# Paths in `script:` and `conda:` are relative to this file; inputs and outputs to the checkout.


# The page's Vega runtime, pinned by version and sha256 in config/vendor.json.
rule fetch_vendor:
    input:
        config="config/vendor.json",
        code=code("scripts/fetch_vendor.py"),
    output:
        js=".cache/vendor/vega.min.js",
    log:
        "build/logs/fetch_vendor.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/fetch_vendor.py"


# The static lesson page: Jinja template + Vega-Lite specs + the JSON; no network at view time. Written to
# build/<anchor>/site/; publish swaps it in (site/ or site/<name>/) only after every rule succeeded.
rule render_site:
    input:
        data=f"{PRE}/precomputed.json",
        # the provenance page shows each input field's value where it is written: the anchor, its GPU, a cited figure
        anchor=anchor_file,
        gpus="config/gpus.json",
        cited="config/cited.json",
        tokens=f"{PRE}/tokenizer_counts.json",
        bench=f"{PRE}/bench_medians.json",
        real=f"{PRE}/measured_records.json",  # the real engine's records (rule measured_records), read beside the benchmark's
        questions="questions/C13-L5.md",
        course="config/course.json",
        lab="config/lab.json",
        runtime=".cache/vendor/vega.min.js",
        vendor="config/vendor.json",
        serving=f"{PRE}/serving.json",
        prefix=f"{PRE}/prefix.json",
        # every page template (a section added later is an input without listing it here), the script (its
        # sections in templates/lesson/) and style, and the simulator's twin, joined by render
        templates=[*sorted(glob.glob("templates/*.html.j2")), "templates/lesson.js", "templates/lesson.css",
                   *sorted(glob.glob("templates/lab/*.js")), *sorted(glob.glob("templates/lab/model/*")),
                   *sorted(glob.glob("templates/lesson/*.js")), *sorted(glob.glob("templates/serving_sim/*.js"))],
        code=code("scripts/render_site.py"),
    output:
        html=f"{PAGE}/index.html",
        lab=f"{PAGE}/lab.html",
        validation=f"{PAGE}/validation.html",
        runtime=f"{PAGE}/vega.min.js",
        script=f"{PAGE}/lesson.js",
        data_script=f"{PAGE}/lesson-data.js",
        serving_script=f"{PAGE}/serving-data.js",
        sim_script=f"{PAGE}/serving-sim.js",
        prefix_script=f"{PAGE}/prefix-data.js",
        lab_model=f"{PAGE}/lab-model.js",
        lab_page=f"{PAGE}/lab.js",
        provenance=f"{PAGE}/provenance.html",
        source=directory(f"{PAGE}/source"),
    log:
        "build/logs/{anchor}/site.log",
    conda:
        "../envs/lesson.yaml"
    script:
        "../scripts/render_site.py"
