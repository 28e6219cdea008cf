"""Typed config groups: one module per `conf/<group>/` folder, each option a pydantic model."""
