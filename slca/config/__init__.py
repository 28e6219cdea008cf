"""Typed experiment specs: pydantic models per config group, Hydra composition, spec I/O, provenance."""
