"""What the models see of a profile: op families, scale-free profile features, novelty, and
the reference method's op-name clustering.

Layer 2: imports only ``inputs`` and the root modules.
"""
