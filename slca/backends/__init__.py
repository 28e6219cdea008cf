"""Training backends: `local` (embedded, CPU or one GPU), `verl` (distributed RL), `llamafactory` (SFT).

Each backend module exposes `STAGES`, mapping pipeline stage names to stage functions."""
