"""Launching: sweeps and multiruns, on this machine or on SLURM through submitit; results tables.

`grid` reads sweep files and multirun overrides, `sweep` plans and submits runs and keeps the sweep's
manifest, `local` and `slurm` are the launchers (one registry, `base.LAUNCHERS`; verl runs go to SLURM
through `ray_job`, the verl backend's Ray job array), `job` is what each launched run executes,
`status` says where a run stands and `results` tabulates a sweep (docs/launch.md).
"""
