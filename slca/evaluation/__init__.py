"""Evaluation that controls its own fragility: every protocol factor (seed, template construction,
thinking retention, system prompt) is explicit, and every number is mean ± std over seeds."""
