"""Record keeping: reading and validating inputs, provenance records, atomic writes, the manifest, publish, audit.

It owns every file the kit reads or writes outside a rule's own output; it holds no lesson math of its own.
May import: common, model.
"""
