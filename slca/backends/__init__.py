"""Training backends: `local` (embedded, CPU or one GPU), `verl` (distributed RL), `llamafactory` (SFT).

Each registers one `Backend` (slca/backends/contract.py) from its `backend` module: its stages, dry
run, spec rules and the spec fields it honours."""
