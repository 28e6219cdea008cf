"""Upper bounds shared by the config models: the largest value of each kind that the code can still
run, so an absurd number is refused at composition instead of overflowing or hanging a stage.

Each bound is far above any published recipe; where it comes from a library, the comment says which.
"""

from __future__ import annotations

from typing import Annotated

import annotated_types

# Seeds reach torch.manual_seed (64 bits), random.Random (any) and numpy's legacy np.random.seed
# (32 bits, called by verl's workers): the narrowest wins. The RL round seed derived from run.seed,
# (seed * 7919 + step) * 64 + round, then stays within the int64 an endpoint's `seed` takes.
MAX_SEED = 2**32 - 1
Seed = Annotated[int, annotated_types.Ge(0), annotated_types.Le(MAX_SEED)]

# Token lengths: 16,777,216 tokens, above the longest context any released model supports (10M).
MAX_CONTEXT_TOKENS = 2**24

# Characters of one text held whole in memory and scanned by the parsers (a response, an
# observation): four per token of MAX_CONTEXT_TOKENS.
MAX_TEXT_CHARS = 2**26

# Sequences one step holds in memory at once: an RL step's prompts x n rollouts, an SFT batch, a
# generation batch of the curate stage. Published GRPO recipes use a few thousand.
MAX_SEQUENCES_PER_STEP = 2**16

# Rollouts or samples of one prompt (group size); also caps the rollouts down-sampling keeps.
MAX_GROUP_SIZE = 1024

# Turns, tool rounds and calls per trajectory: each takes at least one token of the response.
MAX_TURNS = 1024

# Optimiser steps of one run, and every "each N steps" interval (N beyond the run's steps means never).
MAX_STEPS = 10**6
MAX_EPOCHS = 10_000

# Rows read from a split (a cap larger than the split reads all of it).
MAX_ROWS = 10**9
# Rows the synthetic generator writes: about 17 minutes at its ~1,000 rows/s.
MAX_SYNTHETIC_ROWS = 10**6

# Sampling temperature: the OpenAI API's range, which endpoints may enforce; hotter is near-uniform noise.
MAX_TEMPERATURE = 2.0

# Reward weights, loss coefficients and penalties: a weighted score, and its square in a group
# variance, stays far inside float32.
MAX_WEIGHT = 1000.0

# Learning rate and AdamW weight decay: with both <= 1 the decay factor 1 - lr * weight_decay stays >= 0.
MAX_LR = 1.0
MAX_WEIGHT_DECAY = 1.0

# Gradient-norm clip: a larger bound never binds on a finite gradient of a trainable model.
MAX_GRAD_CLIP = 1e6

# Nested JSON or Python-literal depth the tool-call parsers accept: below Python's recursion limit
# (1000), which json and ast share with the parser's own walk.
MAX_JSON_DEPTH = 256

# Cluster shape: nodes in one job, GPUs on one node (the largest nodes have 8 to 16).
MAX_NODES = 1024
MAX_GPUS_PER_NODE = 64

# Threads, processes, workers or requests in flight of one process.
MAX_WORKERS = 1024

# Seconds one wall-clock limit may be: a week, well below threading.TIMEOUT_MAX.
MAX_WALL_SECONDS = 7 * 24 * 3600.0
