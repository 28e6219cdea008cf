"""Data: split schemas and validation, streaming parquet/jsonl I/O, the LLaMA-Factory converter,
the RL derivation and the synthetic Toucan-shaped set. Import submodules directly
(`slca.data.io`, `slca.data.schemas`, ...); nothing heavy is imported here."""
