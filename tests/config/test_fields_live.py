"""Every config field is read by some code path: a field nothing reads is a knob that does nothing.

Reads are recorded (tests/config/fieldreads.py) while this process runs the embedded pipeline
through the CLI at toy sizes, validates the same splits as Toucan files, takes one RL step with
every other estimator, filter, down-sampler and reward, builds every evaluation generator, and runs
the unit tests of the simulators, rewards and algorithms, less the reward properties (the sgls simulator and the llm judge meet
scripted endpoints there). Fields only backends that are not built yet would read are listed in
CPU_UNREACHABLE, each with its reason; that list may not hide a field that is in fact read.
"""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from slca.config.spec import Spec
from tests.badinput import run_cli
from tests.config.fieldreads import all_fields, recording_reads

REPO = Path(__file__).resolve().parents[2]

_HUB = "a pretrained hub checkpoint: its weights are not on a CPU test machine (no downloads)"
_GGUF = "the smollm2-135m-instruct backbone, converted from the fetched GGUF (make real-models): tests/models/test_smollm2.py builds it"
_TINY_QWEN = "the tiny_qwen backbones, built on Qwen's fetched tokenizers (make real-models): tests/models/test_tiny_qwen.py trains one"

CPU_UNREACHABLE: dict[str, str] = {
    **{f"HubBackbone.{f}": _HUB for f in ("name", "hub_id", "chat_template", "max_position_embeddings")},
    **{f"TinyQwenBackbone.{f}": _TINY_QWEN for f in ("name", "qwen", "seed", "hidden_size", "num_layers", "num_heads", "num_kv_heads",
                                                      "intermediate_size", "max_position_embeddings", "cache_dir")},
    **{f"GgufBackbone.{f}": _GGUF for f in ("name", "gguf", "chat_template", "tools_block", "max_position_embeddings", "cache_dir")},
}

TOY = ["data.n_sft=40", "data.n_rl=16", "data.n_eval=4", "train.sft.max_rows=40", "train.sft.batch_size=8", "train.sft.micro_batch_size=4",
       "train.rl.max_steps=1", "train.rl.prompts_per_step=2", "train.rl.mini_batch_prompts=2", "train.rl.n=2", "train.rl.max_response_length=48",
       "train.rl.eval_every_steps=1", "train.rl.use_kl_loss=true", "train.rl.kl_coef=0.001", "train.rl.grad_cosine=true", "eval.limit=2",
       "train.curate.rollouts=2", "train.curate.keep=not_all_correct", "train.curate.batch_prompts=8"]

# One RL step each: together they use every estimator, filter, down-sampler, simulator and reward option.
RL_VARIANTS = [
    ["estimator=grpo", "filter=dynamic_sampling", "downsample=random", "reward=exact_match"],
    ["estimator=toolpo", "filter=none", "downsample=none", "simulator=replay"],
    ["estimator=rloo"],
    ["estimator=dr_grpo", "filter=pre_rollout", "filter.correct_threshold=0.5", "filter.readmit_every=1"],
]

UNIT_TESTS = ["tests/sim", "tests/rewards", "tests/algos"]
# The property-based reward tests read no field the other tests there do not (the safety net does:
# the grounding judge's knob), in a sixth of the directories' time.
FUZZERS = ["tests/rewards/test_properties.py"]


def union_tags() -> set[str]:
    """"Model.tag" of each discriminated-union member: pydantic reads the tag to pick the option."""
    tags = set()
    for info in Spec.model_fields.values():
        if info.discriminator:
            for member in typing.get_args(typing.get_args(info.annotation)[0]) or typing.get_args(info.annotation):
                tags.add(f"{member.__name__}.{info.discriminator}")
    return tags


def _rl_step(run_dir: Path, overrides: list[str]) -> None:
    """One step of the local trainer on the run's RL policy and RL rows, under a variant spec."""
    from slca.models.load import load_backbone
    from slca.backends.local.rl import LocalRlTrainer
    from slca.backends.local.rollouts import make_rollout_fn
    from slca.config.io import load_spec
    from slca.data.io import read_rows

    spec = load_spec(run_dir / "spec.yaml", overrides)
    model, tokenizer = load_backbone(run_dir / "rl" / "model")
    rows = list(read_rows(next(Path(spec.data.cache_dir).rglob("rl.parquet"))))
    out = run_dir / ("variant-" + "-".join(o.split("=")[1] for o in overrides[:1]))
    trainer = LocalRlTrainer(spec, model, tokenizer, rows, out, rollout_fn=make_rollout_fn(spec, model, tokenizer, "cpu"),
                             device=__import__("torch").device("cpu"), log=lambda m, step: None)
    trainer.step()


def _eval_generators(run_dir: Path) -> None:
    from transformers import AutoTokenizer

    from slca.config.compose import compose_spec
    from slca.evaluation.generators import BUILDERS, build_generator

    tokenizer = AutoTokenizer.from_pretrained(run_dir / "rl" / "model", local_files_only=True)
    for name in BUILDERS:
        cfg = compose_spec([f"eval.generator={name}"]).eval
        build_generator(cfg, str(run_dir / "rl" / "model"), tokenizer, "cpu")
    # The openai generator's endpoint knobs are read by the HTTP client when it sends (nothing listens on port 9).
    from slca.http import EndpointError

    cfg = compose_spec(["eval.generator=openai", "eval.endpoint.base_url=http://127.0.0.1:9/v1", "eval.endpoint.max_retries=1",
                        "eval.endpoint.retry_backoff_s=0", "eval.endpoint.api_key_env=SLCA_LIVE_KEY", "eval.endpoint.cache_dir=cache/http"]).eval
    with pytest.raises(EndpointError):
        build_generator(cfg, str(run_dir / "rl" / "model"), tokenizer, "cpu").generate([[5]], max_new_tokens=2, temperature=0, top_p=1,
                                                                                       stop_token_ids=set(), seed=0)


def _categories() -> None:
    """The BFCL benchmarks read eval.categories to pick their categories (tests/evaluation runs them end to end)."""
    from slca.config.compose import compose_spec
    from slca.evaluation.bfcl.multi_turn.run import selected

    assert selected(compose_spec(["eval.benchmark=bfcl_multi_turn", "eval.categories=[base]"]).eval) == ("base",)


def _tau2(tmp_path: Path) -> None:
    """The tau2 benchmark up to starting τ² (tests/evaluation/tau2 runs τ² itself): the driver's job reads every
    knob τ² takes, the judge's too when NL assertions are on; evaluate reads the domains, the time limit and
    the environment, and stops at the missing one."""
    from slca.config.compose import compose_spec
    from slca.evaluation.benchmarks import BenchmarkInputs, get_benchmark
    from slca.evaluation.tau2.job import Tau2Error, job_spec

    cfg = compose_spec(["eval.benchmark=tau2", "eval.tau2.nl_assertions=true", f"eval.tau2.env_dir={tmp_path / 'no-tau2-env'}"]).eval
    job_spec(cfg.tau2, domain="retail", mode="llm", seed=0, out=tmp_path / "tau2.json", agent_url="http://127.0.0.1:9/v1")
    inputs = BenchmarkInputs(eval_cfg=cfg, tokenizer=None, rollout_cfg=None, seeds=(0,), split_path=None, reward_cfg=None, simulator_cfg=None)
    with pytest.raises(Tau2Error, match="eval.tau2.env_dir"):
        get_benchmark("tau2").evaluate(None, inputs)


def _lm_eval(tmp_path: Path) -> None:
    """The lm_eval benchmark up to starting the harness (tests/evaluation/test_lm_eval_benchmark.py runs it): its
    preflight and headline read the include path and the tasks; evaluate builds the harness's job from every
    setting and stops at the missing model directory; the driver's process reads the offline switch and the limit."""
    from slca.config.compose import compose_spec
    from slca.evaluation.benchmarks import BenchmarkInputs, get_benchmark
    from slca.evaluation.lmeval.run import LmEvalError, run_driver

    cfg = compose_spec(["eval.benchmark=lm_eval", f"eval.lm_eval.include_path={tmp_path}", "eval.lm_eval.num_fewshot=0"]).eval
    bench = get_benchmark("lm_eval")
    bench.preflight(cfg)
    assert bench.headline_for(cfg)[:2] == ("hellaswag/acc_norm", "hellaswag/acc_norm_stderr")
    inputs = BenchmarkInputs(eval_cfg=cfg, tokenizer=None, rollout_cfg=None, seeds=(0,), split_path=None, reward_cfg=None, simulator_cfg=None)
    with pytest.raises(LmEvalError, match="saved model directory"):
        bench.evaluate(None, inputs)
    with pytest.raises(LmEvalError, match="run failed"):
        run_driver({"mode": "no-such-mode"}, cfg, tmp_path)


def _acebench() -> None:
    """ACEBench's card names agent_multi_turn's user simulator, and the simulator's request reads every
    knob of its endpoint (nothing listens on port 9; tests/evaluation/test_acebench_agent_eval.py runs
    whole episodes against a local user)."""
    from slca.config.compose import compose_spec
    from slca.evaluation.acebench.agent_data import load_agent_category
    from slca.evaluation.acebench.user_sim import UserSimulator
    from slca.evaluation.benchmarks import BenchmarkInputs, get_benchmark
    from slca.http import EndpointError

    user = "{base_url: 'http://127.0.0.1:9/v1', max_retries: 1, retry_backoff_s: 0, cache_dir: cache/http}"
    cfg = compose_spec(["eval.benchmark=acebench", f"eval.acebench.user={user}"]).eval
    inputs = BenchmarkInputs(eval_cfg=cfg, tokenizer=None, rollout_cfg=None, seeds=(0,), split_path=None, reward_cfg=None, simulator_cfg=None)
    assert "agent_multi_turn user simulator: gpt-4o" in get_benchmark("acebench").scoring(inputs).simulator
    with pytest.raises(EndpointError):
        UserSimulator(cfg.acebench.user, load_agent_category("agent_multi_turn", limit=1)[0])([])


def _launchers(tmp_path: Path) -> None:
    """An empty local sweep, and the submitit parameters of the slurm launcher (tests/launch submits real jobs)."""
    from slca.config.compose import compose_spec
    from slca.launch.base import get_launcher
    from slca.launch.slurm import executor_parameters
    from slca.launch.snapshot import freeze

    get_launcher("local").submit([], compose_spec([]).launcher, name="live", log_dir=tmp_path / "sweep-logs", code=freeze(tmp_path))
    executor_parameters(compose_spec(["launcher=slurm"]).launcher, "live")


@pytest.mark.slow
def test_every_config_field_is_read_by_some_code_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # runs/, .cache/ and wandb/ land here
    # The in-process W&B run below starts a service and advertises it in the environment; undo that at
    # teardown so later subprocesses start their own instead of writing through this test's.
    monkeypatch.delenv("WANDB_SERVICE", raising=False)
    cache = ["data.cache_dir=cache/data", "backbone.cache_dir=cache/backbones"]
    with recording_reads() as reads:
        # run.dir unset: the run directory comes from run.name.
        result = run_cli(["run", "experiment=embedded_smoke", "run.name=live", "run.stages=[data,sft,curate,rl,eval]", *cache, *TOY], capsys)
        assert result.code == 0, result.err
        (run_dir,) = (tmp_path / "runs" / "live").iterdir()
        splits = {p.stem: p for p in (tmp_path / "cache" / "data").rglob("*.parquet")}
        toucan = [f"data.{s}_path={splits[s]}" for s in ("sft", "rl", "eval")]
        result = run_cli(["run", "experiment=embedded_demo", "data=toucan", *toucan, "data.on_error=skip", "run.stages=[data]",
                          "run.dir=toucan", "logger=none"], capsys)
        assert result.code == 0, result.err
        # The LLaMA-Factory stage's dry run writes everything its trainer reads, from every backend field.
        result = run_cli(["run", "--dry-run", "experiment=embedded_smoke", "backend=llamafactory", "backend.nproc_per_node=2",
                          "run.stages=[data,sft]", "run.dir=lf", "logger=none", *cache, *TOY], capsys)
        assert "dry run" in result.out, result.err
        # The verl backend's dry run composes verl's config from every backend field (the GPU one and the CPU one).
        for device in ("cuda", "cpu"):
            result = run_cli(["run", "--dry-run", "experiment=verl_smoke", f"backend.device={device}", f"run.dir=verl_{device}", "logger=none", *cache], capsys)
            assert result.code == 0, result.err
        for overrides in RL_VARIANTS:
            _rl_step(run_dir, overrides)
        _eval_generators(run_dir)
        _categories()
        _tau2(tmp_path)
        _lm_eval(tmp_path)
        _acebench()
        _launchers(tmp_path)
        skip = [arg for path in FUZZERS for arg in ("--ignore", str(REPO / path))]
        assert pytest.main([str(REPO / t) for t in UNIT_TESTS] + skip + ["-q", "-p", "no:cacheprovider", "--rootdir", str(REPO)]) in (0, 1)
    capsys.readouterr()
    import wandb

    wandb.teardown()
    whitelisted = set(CPU_UNREACHABLE)
    assert whitelisted <= all_fields(), f"whitelist names fields that do not exist: {sorted(whitelisted - all_fields())}"
    unread = all_fields() - reads - union_tags() - whitelisted
    assert not unread, f"config fields that no code reads (wire or delete them): {sorted(unread)}"
    stale = whitelisted & reads
    assert not stale, f"whitelisted as unreachable on CPU but read: {sorted(stale)}"
