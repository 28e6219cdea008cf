"""The tiny_qwen backbones: Qwen's real tokenizer and chat template on tiny random Qwen2/Qwen3 weights,
resolved through slca.models and trained by the local backend.

The oracle for every prompt is Qwen's official template, loaded straight from the fetched files
(tests/models/conftest.py), never through the built backbone. `make test` fetches them first; without
them these tests fail on the one line naming the missing file and `make real-models`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from slca.config.compose import compose_spec
from slca.models.backbones import backbone_dir, template_family
from tests.badinput import run_cli

ARCHITECTURES = {"qwen2.5": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM"}
WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Current weather of a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
# Small enough that SFT and an RL step on a ~151k-token vocabulary stay at a few seconds.
TOY = ["data.n_sft=4", "data.n_rl=4", "data.n_eval=4", "train.sft.max_rows=4", "train.sft.batch_size=2", "train.sft.micro_batch_size=2",
       "train.sft.max_length=1024", "train.rl.max_steps=1", "train.rl.prompts_per_step=1", "train.rl.mini_batch_prompts=1",
       "train.rl.n=2", "train.rl.max_response_length=16", "filter=none", "downsample=none"]


def no_sft_rows() -> list:
    raise AssertionError("a tiny_qwen build reads no SFT rows")


def _built(cache: Path, option: str) -> tuple[object, Path]:
    cfg = compose_spec([f"backbone={option}", f"backbone.cache_dir={cache}"]).backbone
    return cfg, Path(backbone_dir(cfg, no_sft_rows))


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict[str, tuple[object, Path]]:
    """qwen → (its tiny_qwen option's config, the directory slca.models built for it)."""
    cache = tmp_path_factory.mktemp("backbones")
    return {qwen: _built(cache, f"tiny_{qwen}") for qwen in ARCHITECTURES}


@pytest.mark.parametrize(("option", "qwen", "family"), [("tiny_qwen2.5", "qwen2.5", "qwen"), ("tiny_qwen3", "qwen3", "qwen3")])
def test_each_tiny_qwen_option_composes_to_its_qwen_and_that_qwens_template_family(option, qwen, family):
    cfg = compose_spec([f"backbone={option}"]).backbone
    assert (cfg.kind, cfg.name, cfg.qwen) == ("tiny_qwen", option, qwen)
    # The family LLaMA-Factory trains with is the one the hub options of that Qwen name.
    hub = compose_spec(["backbone=qwen2.5-3b-instruct" if qwen == "qwen2.5" else "backbone=qwen3-4b"]).backbone
    assert template_family(cfg) == family == hub.chat_template


@pytest.mark.parametrize("qwen", sorted(ARCHITECTURES))
def test_a_tiny_qwen_build_carries_qwens_own_tokenizer_and_template_over_its_whole_vocabulary(qwen, qwen_tokenizers, builds):
    from safetensors import safe_open
    from transformers import AutoConfig, AutoTokenizer

    real = qwen_tokenizers[qwen]
    cfg, path = builds[qwen]
    fetched = Path(real.name_or_path)
    assert all((path / f).read_bytes() == (fetched / f).read_bytes() for f in ("tokenizer.json", "tokenizer_config.json"))
    built = AutoTokenizer.from_pretrained(path, local_files_only=True)
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Zürich and 東京?"},
                {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Zürich"}}}]},
                {"role": "tool", "content": '{"sky": "clear"}'}, {"role": "assistant", "content": "Clear."}]
    text = real.apply_chat_template(messages, tools=[WEATHER], tokenize=False)
    assert built.apply_chat_template(messages, tools=[WEATHER], tokenize=False) == text
    assert built(text, add_special_tokens=False)["input_ids"] == real(text, add_special_tokens=False)["input_ids"]
    config = AutoConfig.from_pretrained(path, local_files_only=True)
    assert config.architectures == [ARCHITECTURES[qwen]] and config.hidden_size == cfg.hidden_size
    assert config.vocab_size == len(real) > 151_643  # Qwen's BPE vocabulary plus its added tokens
    assert config.eos_token_id == real.convert_tokens_to_ids("<|im_end|>")
    with safe_open(path / "model.safetensors", "pt") as weights:
        embedding = weights.get_tensor("model.embed_tokens.weight")
    assert tuple(embedding.shape) == (len(real), cfg.hidden_size)
    assert (path / "model.safetensors").stat().st_size < 12 * 2**20


def test_a_tiny_qwen_build_is_deterministic_and_its_cache_hit_rewrites_nothing(builds, tmp_path):
    first_cfg, first = builds["qwen3"]
    _, again = _built(tmp_path, "tiny_qwen3")
    assert again.name == first.name
    for file in ("model.safetensors", "config.json", "tokenizer.json"):
        assert (again / file).read_bytes() == (first / file).read_bytes(), file
    stamp = (first / "model.safetensors").stat().st_mtime_ns
    assert Path(backbone_dir(first_cfg, no_sft_rows)) == first and (first / "model.safetensors").stat().st_mtime_ns == stamp
    assert not [p for p in first.parent.iterdir() if p.name.endswith(".tmp")]


def test_an_unfetched_qwen_tokenizer_refuses_the_run_in_one_line_naming_the_file_and_make_real_models(tmp_path, monkeypatch, capsys):
    import slca.models.real_files as real_files

    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    (checkout / real_files.DIGESTS_FILE).write_bytes((real_files.checkout_root() / real_files.DIGESTS_FILE).read_bytes())
    monkeypatch.setattr(real_files, "checkout_root", lambda: checkout)
    monkeypatch.chdir(tmp_path)
    result = run_cli(["run", "experiment=embedded_smoke", "backbone=tiny_qwen3", "run.dir=run", "run.stages=[data,sft]", "logger=none",
                      "data.cache_dir=cache/data", "backbone.cache_dir=cache/backbones", *TOY], capsys)
    assert result.code == 4, result.err  # EXIT_REFUSED: the user's to fix
    (line,) = result.err.strip().splitlines()
    assert str(checkout / ".cache/real-models/qwen3/tokenizer.json") in line and "make real-models" in line
    assert not (tmp_path / "cache" / "backbones").exists() or not any((tmp_path / "cache" / "backbones").iterdir())


@pytest.mark.slow
def test_the_local_backend_runs_data_sft_and_a_multi_turn_rl_step_on_tiny_qwen3_with_qwens_own_prompts(tmp_path, monkeypatch, capsys, qwen_tokenizers):
    import slca.backends.local.rollouts as local_rollouts
    from slca.backends.local.rl import LocalRlTrainer
    from slca.config.io import load_spec
    from slca.models.load import load_backbone
    from tests.rollout.conftest import ScriptedGenerator, make_row

    real = qwen_tokenizers["qwen3"]
    monkeypatch.chdir(tmp_path)
    result = run_cli(["run", "experiment=embedded_smoke", "backbone=tiny_qwen3", "run.dir=run", "run.stages=[data,sft,rl]", "logger=none",
                      "data.cache_dir=cache/data", "backbone.cache_dir=cache/backbones", *TOY], capsys)
    assert result.code == 0, result.err
    sft = json.loads((tmp_path / "run" / "sft" / "result.json").read_text())
    rl = json.loads((tmp_path / "run" / "rl" / "result.json").read_text())
    assert sft["steps"] >= 2 and rl["steps"] == 1

    # One more RL step of the local trainer on the trained policy, its generator scripted to write Qwen's
    # own rendering of a tool call then an answer: the simulator answers in between (multi-turn).
    spec = load_spec(tmp_path / "run" / "spec.yaml", ["simulator=replay", "train.rl.max_response_length=256"])
    model, tokenizer = load_backbone(tmp_path / "run" / "rl" / "model")
    row = make_row("MULTI: weather in Paris?", recorded=[{"name": "get_weather", "arguments": {"city": "Paris"}, "response": '{"sky": "clear"}'}],
                   tools=(WEATHER,))
    episode = [*row["prompt"], {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
               {"role": "tool", "content": '{"sky": "clear"}'}, {"role": "assistant", "content": "Clear in Paris."}]
    # slca hands a chat template each tool in the OpenAI envelope, as SFT does (slca.toolcall.prompts.tools_for_template).
    expected = real.apply_chat_template(episode, tools=[WEATHER], tokenize=False)
    turns = [body[: body.index("<|im_end|>") + len("<|im_end|>")] for body in expected.split("<|im_start|>assistant\n")[1:]]
    scripted = ScriptedGenerator(tokenizer, {"MULTI": turns})
    monkeypatch.setattr(local_rollouts, "get_generator", lambda name: lambda model, pad_token_id: scripted)
    seen = []

    def rollout(rows, *, n, seed):
        batch = local_rollouts.make_rollout_fn(spec, model, tokenizer, "cpu")(rows, n=n, seed=seed)
        seen.extend(batch)
        return batch

    import torch

    trainer = LocalRlTrainer(spec, model, tokenizer, [row], tmp_path / "scripted", rollout_fn=rollout, device=torch.device("cpu"), log=lambda m, step: None)
    metrics = trainer.step()
    prompt = real.apply_chat_template(row["prompt"], tools=[WEATHER], add_generation_prompt=True, tokenize=False)
    assert seen and all(t.prompt_ids == real(prompt, add_special_tokens=False)["input_ids"] for t in seen)
    assert all(t.n_tool_rounds == 1 and t.finish_reason == "final" for t in seen)
    assert all(tokenizer.decode(t.prompt_ids + t.response_ids) == expected.removesuffix("\n") for t in seen)
    assert math.isfinite(metrics["loss/policy"]) and math.isfinite(metrics["loss/grad_norm"])  # the update ran on these rollouts
