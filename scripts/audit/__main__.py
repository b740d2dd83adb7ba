"""`python -m scripts.audit`: what `make audit` runs (see scripts/audit/report.py)."""
import sys

from scripts.audit.report import main

sys.exit(main())
