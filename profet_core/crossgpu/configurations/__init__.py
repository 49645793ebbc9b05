"""Precision (AMP) and GPU count of a configuration."""
