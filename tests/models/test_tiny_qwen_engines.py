"""tiny_qwen3 through the real engines, Qwen3's own tokenizer and chat template all the way: LLaMA-Factory
SFT (its `qwen3` template) → one real verl step of multi-turn SLCA-GRPO from that checkpoint (the hand-off
paper_slca documents: `backbone.hub_id` = the SFT model) → `slca eval` on toucan, BFCL single-turn and
BFCL multi-turn. Then verl's own agent-loop worker, on that run's config and the SFT model's tokenizer,
runs a turn of three `<tool_call>` blocks (how Qwen writes parallel calls) through slca's agent loop; the
same on tiny_qwen2.5 untrained (Qwen2.5's template), where the whole chain would double the file's time.

An SFT this short leaves the tiny model writing no parseable call, so sampled rollouts run no tool round;
the tool rounds are checked with a scripted policy (a test double for the policy only, as in
tests/backends/verl/test_verl_tools_on_cpu.py): verl's worker, slca's agent loop, the simulator and
Qwen3's template are the real ones.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.backends.llamafactory.conftest import lf_env  # noqa: F401 - the session's LLaMA-Factory environment
from tests.backends.verl.shared_run import rl_steps
from tests.backends.verl.test_verl_tools_on_cpu import FINAL, THREE_BLOCKS, ScriptedPolicy, gold_call_turn, verl_batch

pytestmark = [pytest.mark.slow, pytest.mark.llamafactory, pytest.mark.verl]

N_SFT, SFT_BATCH, SFT_EPOCHS = 8, 2, 2


def sft_overrides(lf_env: Path) -> list[str]:
    """LLaMA-Factory SFT of tiny_qwen3: 2 epochs of the same 4 batches (a ~151k-token vocabulary makes every
    step cost seconds on CPU)."""
    return [
        "experiment=embedded_smoke", "backbone=tiny_qwen3", "backend=llamafactory", f"backend.executable={lf_env / 'bin' / 'llamafactory-cli'}",
        f"data.n_sft={N_SFT}", f"train.sft.max_rows={N_SFT}", f"train.sft.epochs={SFT_EPOCHS}", f"train.sft.batch_size={SFT_BATCH}",
        f"train.sft.micro_batch_size={SFT_BATCH}", "train.sft.lr=1e-2", "train.sft.max_length=1024",
    ]


def verl_overrides(sft_model: Path) -> list[str]:
    """One verl step (2 prompts x 2 rollouts) from the SFT model as a hub-kind Qwen3 backbone, then the toucan eval."""
    return [
        "experiment=verl_smoke", "backbone=qwen3-4b", "backbone.name=tiny_qwen3_lf", f"backbone.hub_id={sft_model}",
        "backbone.max_position_embeddings=4096", "run.stages=[data,rl,eval]", "logger=none",
        "train.rl.max_steps=1", "train.rl.prompts_per_step=2", "train.rl.n=2", "train.rl.mini_batch_prompts=2",
        "train.rl.max_response_length=64", "backend.ppo_micro_batch_size_per_gpu=4", "backend.log_prob_micro_batch_size_per_gpu=4",
        "eval.limit=4", "eval.max_tokens=16", "eval.rollout.max_prompt_length=1024", "eval.rollout.max_response_length=64",
    ]


EVALS = {
    "bfcl": ["eval.categories=[simple,parallel]", "eval.limit=1", "eval.max_tokens=16"],
    "bfcl_multi_turn": ["eval.categories=[base]", "eval.limit=1", "eval.max_tokens=8", "eval.rollout.max_prompt_length=60000"],
}


def qwen3_template() -> tuple[str, int]:
    """(Qwen3's official chat template, its vocabulary size with added tokens), read from the fetched files."""
    from slca.models.real_files import qwen_tokenizer_dir

    folder = qwen_tokenizer_dir("qwen3")
    tokenizer = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    vocabulary = set(tokenizer["model"]["vocab"].values()) | {t["id"] for t in tokenizer["added_tokens"]}
    return json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))["chat_template"], len(vocabulary)


def _slca(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "slca.cli", *argv], capture_output=True, text=True, cwd=cwd, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def pipeline(lf_env, stage_cache, tmp_path_factory) -> dict:  # noqa: F811 - lf_env is the imported fixture
    """The three phases' run directories and wall seconds."""
    work = tmp_path_factory.mktemp("tiny_qwen_engines")
    seconds = {}
    start = time.perf_counter()
    sft_run = stage_cache.finished(sft_overrides(lf_env))
    seconds["llamafactory_sft"] = time.perf_counter() - start
    sft_model = sft_run / json.loads((sft_run / "sft" / "result.json").read_text())["model_dir"]
    start = time.perf_counter()
    _slca(["run", *verl_overrides(sft_model), "run.dir=rl_run"], work)
    seconds["verl_rl_and_toucan_eval"] = time.perf_counter() - start
    rl_model = work / "rl_run" / "rl" / "model"
    for benchmark, overrides in EVALS.items():
        start = time.perf_counter()
        _slca(["eval", "--model", str(rl_model), "experiment=embedded_smoke", "logger=none", f"eval.benchmark={benchmark}",
               *overrides, f"run.dir={benchmark}"], work)
        seconds[f"eval_{benchmark}"] = time.perf_counter() - start
    print(f"\ntiny_qwen3 through the engines, wall seconds: {json.dumps({k: round(v, 1) for k, v in seconds.items()})}")
    return {"sft_run": sft_run, "sft_model": sft_model, "rl_run": work / "rl_run", "work": work, "seconds": seconds}


def test_llamafactory_trains_tiny_qwen3_under_qwen3s_template_and_hands_on_qwens_own_tokenizer(pipeline):
    from transformers import AutoTokenizer

    result = json.loads((pipeline["sft_run"] / "sft" / "result.json").read_text())
    assert result["template"] == "qwen3" and result["rows"] == result["examples_trained"] == N_SFT
    curve = [m for m in map(json.loads, (pipeline["sft_run"] / "metrics.jsonl").read_text().splitlines()) if m["stage"] == "sft"]
    per_epoch = N_SFT // SFT_BATCH
    assert len(curve) == SFT_EPOCHS * per_epoch and all(math.isfinite(m["loss"]) for m in curve)
    first, second = (sum(m["loss"] for m in curve[e * per_epoch:(e + 1) * per_epoch]) / per_epoch for e in range(2))
    print(f"\nLLaMA-Factory SFT loss per epoch (same rows): {first:.3f} -> {second:.3f}")
    assert second < first  # the same rows again, after an epoch on them
    template, vocabulary = qwen3_template()
    saved = AutoTokenizer.from_pretrained(pipeline["sft_model"])
    assert saved.chat_template == template and len(saved) == vocabulary


def test_one_real_verl_step_runs_on_the_llamafactory_checkpoint_with_qwen3s_template(pipeline):
    from transformers import AutoTokenizer

    run = pipeline["rl_run"]
    (step,) = rl_steps(run)
    print(f"\nverl step: {json.dumps({k: step[k] for k in ('actor/pg_loss', 'actor/grad_norm', 'response_length/mean', 'critic/score/mean', 'timing_s/step')})}")
    assert step["step"] == 1 and math.isfinite(step["actor/pg_loss"]) and math.isfinite(step["actor/grad_norm"])
    assert step["response_length/mean"] > 0 and -0.5 <= step["critic/score/mean"] <= 1.0
    assert step["training/rollout_probs_diff_max"] < 1e-2  # verl's actor and its rollout read the same Qwen3 weights
    model = run / "rl" / "model"
    assert AutoTokenizer.from_pretrained(model).chat_template == qwen3_template()[0]


def test_slca_eval_scores_the_verl_policy_on_toucan_and_bfcl_single_and_multi_turn_with_a_protocol_card(pipeline):
    records = {"toucan": pipeline["rl_run"] / "eval" / "results.json"}
    records.update({b: pipeline["work"] / b / "eval" / "results.json" for b in EVALS})
    for benchmark, path in records.items():
        (model,) = json.loads(path.read_text())["results"]
        card = model["card"]
        assert card["scoring"]["benchmark"] == benchmark and card["factors"]["constructions"] == ["native"]
        (cell,) = model["cells"]
        (per_seed,) = cell["per_seed"]
        assert per_seed["rows"] >= 1
        headline = "success" if benchmark == "toucan" else "accuracy"
        assert 0.0 <= per_seed[headline] <= 1.0
        print(f"\n{benchmark}: {json.dumps({k: v for k, v in per_seed.items() if v is not None})}")


def assert_three_blocks_run_in_qwens_tool_turn(spec, model: Path, train_file: str, val_file: str, run_dir: Path) -> None:
    """verl's agent-loop worker, configured by `spec` on `model`: a turn of three call blocks then an answer,
    and one gold call then an answer; every call runs and Qwen's template answers them in one tool turn."""
    from transformers import AutoTokenizer

    from slca.backends.verl.compose import VerlInputs, compose_verl_config
    from slca.backends.verl.stages import write_verl_config
    from slca.config.io import write_spec
    from slca.data.io import read_rows

    cfg = compose_verl_config(spec, VerlInputs(str(model), train_file, val_file, run_dir, write_spec(spec, run_dir / "spec.yaml")))
    write_verl_config(spec, run_dir, cfg)
    tokenizer = AutoTokenizer.from_pretrained(model)
    rows = list({r["reward_model"]["ground_truth"]["question_content"]: r for r in read_rows(train_file)}.values())[:2]
    q = [r["reward_model"]["ground_truth"]["question_content"] for r in rows]
    out = verl_batch(cfg, ScriptedPolicy(tokenizer, {q[0]: [THREE_BLOCKS, FINAL], q[1]: [gold_call_turn(rows[1]), FINAL]}), rows)

    prompts, responses, mask = out.batch["prompts"], out.batch["responses"], out.batch["response_mask"]
    attention = out.batch["attention_mask"][:, prompts.shape[1]:].bool()
    assert out.non_tensor_batch["slca_tool_calls"].tolist() == [3, 1]
    for i, calls in enumerate((3, 1)):
        text = tokenizer.decode(responses[i][attention[i]].tolist(), skip_special_tokens=False)
        inserted = tokenizer.decode(responses[i][attention[i] & (mask[i] == 0)].tolist(), skip_special_tokens=False)
        # Qwen's templates answer every call of the turn in one user turn, one <tool_response> each.
        assert inserted.startswith("\n<|im_start|>user\n<tool_response>\n") and inserted.count("<tool_response>") == calls
        assert text.endswith(FINAL)  # the policy's answer after the tool turn, generated (mask 1)


def test_verls_agent_loop_runs_all_three_call_blocks_of_a_qwen3_turn_and_answers_them_in_qwens_tool_turn(pipeline):
    from omegaconf import OmegaConf

    from slca.config.compose import compose_spec

    # The verl run's spec, model and data, with room for three calls, their answers and a final turn.
    spec = compose_spec([*verl_overrides(pipeline["sft_model"]), "train.rl.max_response_length=400"])
    ran = OmegaConf.load(pipeline["rl_run"] / "rl" / "verl_config.yaml")
    assert_three_blocks_run_in_qwens_tool_turn(spec, pipeline["sft_model"], ran.data.train_files, ran.data.val_files, pipeline["work"] / "scripted")


def test_verls_agent_loop_runs_all_three_call_blocks_of_a_qwen25_turn_on_tiny_qwen25(tmp_path):
    from slca.backends.verl.stages import _data_files, _model_path
    from slca.config.compose import compose_spec

    spec = compose_spec(["experiment=verl_smoke", "backbone=tiny_qwen2.5", f"backbone.cache_dir={tmp_path / 'backbones'}", "train.rl.max_response_length=400"])
    assert_three_blocks_run_in_qwens_tool_turn(spec, Path(_model_path(spec)), *_data_files(spec), tmp_path / "run")
