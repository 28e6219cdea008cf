"""LLaMA-Factory backend: the SFT stage run by `llamafactory-cli train` from LLaMA-Factory's own
environment (its pins clash with slca's; `make llamafactory-env` builds it).

`trainargs` turns the spec into LLaMA-Factory's train YAML, DeepSpeed config and command line (pure);
`template` holds the chat template the tiny backbone is trained and rolled out with; `runner` runs
the subprocess and reads its loss curve back; `stages` wires them into the pipeline.
"""
