"""`slca eval` with `eval.benchmark=tau2` end to end: slca serves a tiny real policy (hf generator)
as the OpenAI-compatible agent endpoint, τ² runs in its own environment with its user simulator at a
scripted local server, and the result carries per-domain pass^1 and its protocol card."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from slca.evaluation.tau2.job import DATA_DIR
from tests.badinput import assert_refused, run_cli
from tests.conftest import serve_scripted
from tests.evaluation.tiny_policy import save_tiny_policy

pytestmark = [pytest.mark.slow, pytest.mark.tau2]


@pytest.fixture(scope="module")
def tiny_policy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny real Qwen3 model whose tokenizer was trained on the retail policy and tasks."""
    corpus = [(DATA_DIR / "tau2" / "domains" / "retail" / name).read_text()[:3000] for name in ("policy.md", "tasks.json")]
    return save_tiny_policy(tmp_path_factory.mktemp("tau2_policy"), corpus * 2, vocab_size=1024)


def _user(requests: list[dict[str, Any]]):
    def reply(body: dict) -> tuple[int, bytes, float]:
        seen = sum(1 for r in requests if r["body"]["model"] == "user")
        text = "I want to exchange a keyboard." if seen == 1 else "###STOP###"
        payload = {"id": "u", "object": "chat.completion", "created": 0, "model": "user",
                   "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                   "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        return 200, json.dumps(payload).encode(), 0.0

    return reply


def test_slca_eval_on_tau2_serves_the_policy_to_tau2_and_reports_pass_at_one_with_its_card(
    tau2_python: Path, tiny_policy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    run_dir = tmp_path / "run"
    with serve_scripted(lambda body: (500, b"{}", 0.0)) as endpoint:
        endpoint.default = _user(endpoint.requests)
        result = run_cli(["eval", "--model", str(tiny_policy), "experiment=embedded_smoke", "logger=none", f"run.dir={run_dir}",
                          "eval.benchmark=tau2", "eval.tau2.domains=[retail]", "eval.limit=1", "eval.max_tokens=24",
                          # sampled, so the untrained model says something rather than ending its turn at once
                          "eval.temperature=1.0", "eval.seeds=[0]",
                          "eval.rollout.max_prompt_length=200000", "eval.tau2.max_steps=12",
                          "eval.tau2.user.model=openai/user", f"eval.tau2.user.base_url={endpoint.url}", "eval.tau2.user.api_key_env=null"],
                         capsys)
        requests = list(endpoint.requests)
    assert result.code == 0, result.err
    record = json.loads((run_dir / "eval" / "results.json").read_text())
    (model,) = record["results"]
    card = model["card"]
    assert card["scoring"] == {"benchmark": "tau2", "reward": "tau2", "success_threshold": None,
                               "simulator": "tau2 user simulator openai/user"}
    assert card["data"]["path"] == str(DATA_DIR / "tau2" / "domains")
    assert (card["data"]["rows"], card["data"]["rows_evaluated"]) == (114, 1)
    assert card["model"]["path"] == str(tiny_policy.resolve())
    (cell,) = model["cells"]
    metrics = {k: v["mean"] for k, v in cell["metrics"].items()}
    # An untrained one-layer model cannot solve a retail task; telecom was not evaluated.
    assert metrics["retail/pass^1"] == 0.0 and metrics["pass^1"] == 0.0
    assert metrics["telecom/pass^1"] is None and cell["metrics"]["telecom/pass^1"]["n"] == 0  # null: JSON has no NaN
    # Only the user simulator was scripted: the agent's requests went to slca's own policy server,
    # whose replies reached the user (its second request holds the policy's turn, roles flipped).
    assert {r["body"]["model"] for r in requests} == {"user"} and len(requests) == 2
    assert metrics["retail/errors"] == 0.0
    policy_turn = requests[1]["body"]["messages"][-1]
    assert policy_turn["role"] == "user" and policy_turn["content"].strip()
    assert "retail/pass^1" in (run_dir / "eval" / "table.md").read_text()


@pytest.mark.parametrize(("override", "mentions"), [
    ("eval.tau2.domains=[airline]", ("eval.tau2.domains.0", "airline", "db.json")),
    ("eval.tau2.domains=[retail,retail]", ("eval.tau2.domains", "twice")),
    ("eval.tau2.env_dir=/nonexistent/tau2-env", ("eval.tau2.env_dir", "/nonexistent/tau2-env", "make tau2-env")),
])
def test_slca_eval_on_tau2_refuses_bad_settings_in_one_line_and_writes_no_result(
    override: str, mentions: tuple[str, ...], tiny_policy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    run_dir = tmp_path / "run"
    result = run_cli(["eval", "--model", str(tiny_policy), "experiment=embedded_smoke", "logger=none", f"run.dir={run_dir}",
                      "eval.benchmark=tau2", override], capsys)
    assert_refused(result, *mentions)
    assert not (run_dir / "eval" / "results.json").exists()


def test_slca_eval_on_tau2_whose_every_simulation_raised_fails_naming_the_first_error_instead_of_scoring_zero(
    tau2_python: Path, tiny_policy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    run_dir = tmp_path / "run"
    # The user simulator refuses every request: no simulation can start, so nothing was evaluated.
    with serve_scripted(lambda body: (400, b'{"error": {"message": "scripted refusal"}}', 0.0)) as endpoint:
        result = run_cli(["eval", "--model", str(tiny_policy), "experiment=embedded_smoke", "logger=none", f"run.dir={run_dir}",
                          "eval.benchmark=tau2", "eval.tau2.domains=[retail]", "eval.limit=1", "eval.max_tokens=8",
                          "eval.rollout.max_prompt_length=200000", "eval.tau2.max_steps=4",
                          "eval.tau2.user.model=openai/user", f"eval.tau2.user.base_url={endpoint.url}", "eval.tau2.user.api_key_env=null"],
                         capsys)
    assert_refused(result, "eval cell native/keep/dataset_template: no row evaluated in seed 0 (1 of 1 τ² simulations raised, first: task",
                   "scripted refusal", "eval.allow_empty_cells=true")
    assert not (run_dir / "eval" / "results.json").exists()
