"""The cross-instance spec model: GPUs moved by their spec sheets."""
