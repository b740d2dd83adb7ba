"""The page experiments' math, one definition each for the page's twin, the tests and the audit: the lesson's
"under load" section (load_page), the lab's prefix-cache table (prefix_runs) and experiment D's five tools'
metrics (tool_metrics, with tool_table its command-line table)."""
