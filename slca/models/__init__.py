"""Backbones: a backbone option resolved offline to its tokenizer, chat template and weights."""
