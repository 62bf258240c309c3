"""Lowest layer: dtypes and promotion, devices, the array backend and the RNG."""
