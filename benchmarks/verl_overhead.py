"""slca's overhead inside verl on CPU: plain verl GRPO against slca's `estimator=grpo`, the same
smoke configuration (tiny SFT model, synthetic data, 4 prompts x n=4, multi-turn tool rounds) in
one invocation, filter and down-sampler off.

- slca: `slca run` with verl's trainer mode `slca` (slca's trainer subclass and advantage step),
  slca's tool agent loop and hermes parser, slca's reward entry (a row with extras).
- plain: the config slca composed for that run with every slca hook swapped for verl's own:
  verl's synchronous trainer (`verl_plain_plugin.py`: only its workers on gloo, as the CPU platform
  needs), verl's `grpo` estimator, verl's `tool_agent` loop and `hermes` parser, and a reward file
  (`verl_plain_reward.py`) calling slca's HierR scorer directly and returning the bare score.
  The CPU platform and transformers rollout server are shared: plain verl has no CPU rollout.
- plain+loop: plain with slca's tool agent loop and parser. verl's own loop renders the wildcard
  tool's placeholder schema into every prompt (the row's tools it cannot show), so its rollouts are
  other token sequences of other lengths; with slca's loop the workload is slca's, and the ratio
  slca / plain+loop is the cost of slca's trainer, estimator, reward entry and hooks alone.

Printed per phase, from verl's own per-step timing metrics (`timing_s/*`): medians over the steps
after the first (start-up), the last step's checkpoint save taken out of `step`; the ratios of slca
to each plain run per phase, with the token counts and the step time per thousand tokens beside them.
verl's replay buffer polls for finished rollouts every 2 s, so `gen` moves in steps of 2 s on CPU.

Usage: python benchmarks/verl_overhead.py [--steps N] [--work DIR] [overrides...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from _runs import fork_run, slca_run

from verl_efficiency import verl_steps

HERE = Path(__file__).resolve().parent
COMMON = ("experiment=verl_smoke", "backend.save_freq=1000", "estimator=grpo", "filter=none", "downsample=none")
# verl 0.9.1's v1 trainer scores inside the agent loop, so `gen` holds the rollout and its reward; the
# reward is timed apart, in this process, on the rollouts of the plain run with slca's loop.
PHASES = {
    "gen": "timing_s/gen",
    "old_log_prob": "timing_s/old_log_prob",
    "adv": "timing_s/adv",
    "update_actor": "timing_s/update_actor",
}
# The plain runs: name -> whether it keeps slca's agent loop.
PLAIN = {"plain+loop": True, "plain": False}
WORKLOAD = {"tokens": "perf/total_num_tokens", "prompt len": "prompt_length/mean", "response len": "response_length/mean", "turns": "num_turns/mean"}


def plain_config(slca_config: Path, target_dir: Path, slca_loop: bool) -> Path:
    """The verl config of the slca run with slca's hooks replaced by verl's own (module docstring);
    `slca_loop` keeps slca's agent loop and tool parser."""
    from omegaconf import OmegaConf

    cfg = OmegaConf.load(slca_config)
    cfg.trainer.v1.trainer_mode = "plain_cpu"
    cfg.algorithm.adv_estimator = "grpo"
    if not slca_loop:
        cfg.actor_rollout_ref.rollout.agent.default_agent_loop = "tool_agent"
        cfg.actor_rollout_ref.rollout.multi_turn.format = "hermes"
    cfg.reward.custom_reward_function.path = str(HERE / "verl_plain_reward.py")
    cfg.trainer.default_local_dir = str(target_dir / "checkpoints")
    cfg.trainer.experiment_name = "plain"
    cfg.trainer.rollout_data_dir = "dump"  # verl dumps each step's rollouts after the step's timer stops
    target_dir.mkdir(parents=True, exist_ok=True)
    path = target_dir / "verl_config.yaml"
    path.write_text(OmegaConf.to_yaml(cfg))
    return path


def run_plain(slca_dir: Path, plain_dir: Path, slca_loop: bool) -> Path:
    """verl's main_ppo on a plain config; returns the run's folder (metrics in its rl/)."""
    from slca.backends.verl.launch import verl_launch
    from slca.config.io import load_spec

    stage = plain_dir / "rl"
    plain_config(slca_dir / "rl" / "verl_config.yaml", stage, slca_loop)
    launch = verl_launch(load_spec(slca_dir / "spec.yaml"), stage)
    env = {**os.environ, **launch.env}
    env["VERL_USE_EXTERNAL_MODULES"] += ",verl_plain_plugin"  # after slca's: the CPU platform first
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
    with open(stage / "verl.log", "wb") as log:
        code = subprocess.run(launch.argv, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=stage).returncode
    if code != 0:
        raise RuntimeError(f"plain verl exited with status {code}; see {stage / 'verl.log'}")
    return plain_dir


def reward_ms(run_dir: Path, spec_path: Path, passes: int = 5) -> dict[str, float]:
    """ms per rollout of slca's reward entry and of the plain reward file on a plain run's dumped
    rollouts (their text and ground truth), best of `passes` passes, in this process."""
    import importlib.util
    import json

    from slca.backends.verl import reward as slca_reward

    spec_file = importlib.util.spec_from_file_location("verl_plain_reward", HERE / "verl_plain_reward.py")
    plain_reward = importlib.util.module_from_spec(spec_file)
    spec_file.loader.exec_module(plain_reward)  # type: ignore[union-attr]
    rows = [json.loads(line) for path in sorted((run_dir / "rl" / "dump").glob("*.jsonl")) for line in path.read_text().splitlines() if line.strip()]
    out = {}
    for name, fn in (("plain", plain_reward.compute_score), ("slca", slca_reward.compute_score)):
        fn(None, rows[0]["output"], rows[0]["gts"], None, spec_path=str(spec_path))  # builds the scorer
        best = float("inf")
        for _ in range(passes):
            start = time.perf_counter()
            for row in rows:
                fn(None, row["output"], row["gts"], None, spec_path=str(spec_path))
            best = min(best, time.perf_counter() - start)
        out[name] = 1000 * best / len(rows)
    return out


def summarise(steps: list[dict]) -> dict[str, float]:
    """Medians over the steps after the first; `step` without the checkpoint save."""
    warm = steps[1:] or steps
    out = {name: statistics.median(s.get(key, float("nan")) for s in warm) for name, key in {**PHASES, **WORKLOAD}.items()}
    out["step"] = statistics.median(s["timing_s/step"] - s.get("timing_s/save_checkpoint", 0.0) for s in warm)
    out["step s/ktok"] = statistics.median(1000 * (s["timing_s/step"] - s.get("timing_s/save_checkpoint", 0.0)) / s["perf/total_num_tokens"] for s in warm)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=10, help="verl steps per run (the first is start-up and not counted)")
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("overrides", nargs="*", help="extra slca overrides for both runs")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="slca-verl-overhead-"))
    work.mkdir(parents=True, exist_ok=True)
    common = [*COMMON, f"train.rl.max_steps={args.steps}", *args.overrides]
    base = work / "sft"
    if not (base / "sft" / "model").exists():
        slca_run(base, *common, "run.stages=[data,sft]", cwd=work)
    for old in ("slca", *PLAIN):  # fresh runs: an existing one would resume from its last checkpoint
        shutil.rmtree(work / old, ignore_errors=True)
    slca_dir = fork_run(base, work / "slca")
    slca_run(slca_dir, *common, "run.stages=[data,sft,rl]", cwd=work)
    results = {name: summarise(verl_steps(run_plain(slca_dir, work / name, loop))) for name, loop in PLAIN.items()}
    results["slca"] = summarise(verl_steps(slca_dir))

    columns = [*PHASES, "step", *WORKLOAD, "step s/ktok"]
    print(f"\nverl_smoke on CPU, 4 prompts x n=4, {args.steps} verl steps per run; medians over steps 2..{args.steps} (seconds)")
    print(f"{'':>16s}" + "".join(f"{c:>14s}" for c in columns))
    for name, r in results.items():
        print(f"{name:>16s}" + "".join(f"{r[c]:14.3f}" for c in columns))
    for name in PLAIN:
        ratio = [results["slca"][c] / results[name][c] if results[name][c] else float("nan") for c in columns]
        print(f"{'slca/' + name:>16s}" + "".join(f"{v:13.3f}x" for v in ratio))
    reward = reward_ms(work / "plain+loop", slca_dir / "spec.yaml")
    print(f"reward per rollout (plain+loop's rollouts, this process): plain {reward['plain']:.3f} ms, slca {reward['slca']:.3f} ms, slca/plain {reward['slca'] / reward['plain']:.3f}x")
    print(f"runs kept in {work}")


if __name__ == "__main__":
    main()
