"""slca's ACEBench checker agrees with ACEBench's own evaluation code (eval_main.py, vendored and run
as vendored in its own environment, in a subprocess; its decoder patched not to eval, VENDORED.md) on
every gold answer of the English normal and special categories and on its perturbations: an argument
dropped, a wrong type, a wrong value (of the first argument, and of the last), parallel calls
reordered, an extra call, booleans spelled as JSON spells them, and for special entries a missing
name, a wrong name or value, and a call where the problem should be pointed out; and slca's agent
scores equal ACEBench's agent_eval on gold milestone replays and their perturbations
(docs/eval.md#checking-the-checker-against-acebench)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from slca.evaluation.acebench.agent_agreement import compare as compare_agent
from slca.evaluation.acebench.agreement import ENV_PYTHON, compare

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def acebench_python() -> Path:
    """ACEBench's interpreter, its environment built by the Makefile target on first use, then reused."""
    proc = subprocess.run(["make", "-s", "-C", str(ROOT), "acebench-env"], capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return ENV_PYTHON


@pytest.mark.slow
@pytest.mark.acebench
def test_slcas_checker_gives_acebenchs_verdict_on_every_gold_answer_and_perturbation(acebench_python: Path) -> None:
    agreement = compare(acebench_python)
    print("\n" + agreement.table())
    kinds = {v.kind for v in agreement.verdicts}
    assert kinds == {"gold", "drop_argument", "wrong_type", "wrong_value", "wrong_value_last", "reordered", "extra_call",
                     "json_booleans", "call_instead"}
    assert len({(v.category, v.id) for v in agreement.verdicts if v.kind == "gold"}) == 973
    assert agreement.raised == [], agreement.raised[:5]
    assert agreement.disagreements == [], agreement.disagreements[:5]


@pytest.mark.slow
@pytest.mark.acebench
def test_slcas_agent_scores_equal_acebenchs_on_gold_replays_and_perturbations(acebench_python: Path) -> None:
    agreement = compare_agent(acebench_python)
    print("\n" + agreement.table())
    assert {v.kind for v in agreement.verdicts} == {"gold", "drop_last", "drop_first", "repeat_last", "prose",
                                                     "swap_first_two", "changed_value", "other_path"}
    assert len({v.id for v in agreement.verdicts if v.kind == "gold"}) == 50
    assert len(agreement.decided) == len(agreement.verdicts), [v.raised for v in agreement.verdicts if v.raised][:5]
    assert agreement.disagreements == [], agreement.disagreements[:5]
