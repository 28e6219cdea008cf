"""Curation: offline rollout-based prompt selection (docs/method.md#offline-prompt-curation).

`slca data curate` and the `curate` pipeline stage roll every RL prompt out k times with a policy,
through the same rollout loop, simulator and reward as training, and keep the prompts whose
outcome pattern can teach the policy something. Like the pipeline and the evaluation harness,
this package sits above the core and the rollout loop: it builds a policy from a checkpoint, the
backbone (through slca.models) or an endpoint.
"""
