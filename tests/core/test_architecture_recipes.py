"""docs/architecture.md's recipes, followed for a toy of each kind written into a temporary module:
a toy estimator composes as `estimator=toy` and the estimator registry dispatches to its function; a
toy backend registers its contract, runs only its own stage and a field it does not honour is refused;
a toy benchmark is listed, accepted as `eval.benchmark=toy` and evaluates a two-row file through the
evaluation's own entry and grid.

Each toy runs in a fresh interpreter, so its registrations end with it (registries refuse a name twice
and option unions are built once), and it imports its module before the spec, as a plug-in must."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from slca.config.compose import CONF_DIR

TOY_ESTIMATOR = '''
"""A toy estimator: every response token's advantage is `value`."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from slca.algos.registry import register_estimator
from slca.config.base import SlcaModel
from slca.config.groups.estimator import ESTIMATOR_OPTIONS


@ESTIMATOR_OPTIONS.add
class ToyEstimator(SlcaModel):
    """Every response token's advantage is `value`."""

    name: Literal["toy"] = Field("toy", description="Option name.")
    value: float = Field(0.5, ge=-1.0, le=1.0, description="Advantage of every response token.")


@register_estimator("toy")
def toy(token_level_rewards, response_mask, index, *, segment_rewards=None, config=None, token_level_scores=None, extras=None) -> Any:
    advantages = response_mask.float() * config.value
    return advantages, advantages
'''

TOY_BACKEND = '''
"""A toy backend: runs the rl stage only and ignores the gradient-cosine probe."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from slca.backends.contract import SHARED_SECTIONS, Backend, register_backend, trained
from slca.config.base import SlcaModel
from slca.config.groups.backend import BACKEND_OPTIONS


@BACKEND_OPTIONS.add
class ToyBackend(SlcaModel):
    """A backend that trains nothing."""

    name: Literal["toy"] = Field("toy", description="Option name.")


REFUSES = {"train.rl.grad_cosine": "the toy trainer has no gradient probe"}


def rl_stage(ctx):
    """Trains nothing: its policy is the model it started from, recorded as every rl stage records one."""
    # Imported here: they import the spec, which must not be built before the option above is registered.
    from slca.models.run_weights import base_model_dir
    from slca.stage_results import RlResult

    return RlResult(model_dir=ctx.relative(base_model_dir(ctx)), details={"steps": 0})


BACKEND = register_backend(Backend(
    name="toy",
    stages={"rl": "toy_backend:rl_stage"},
    honours=(*SHARED_SECTIONS, *trained(("train.rl", "filter"), REFUSES)),
    refuses=REFUSES,
))
'''

TOY_BENCHMARK = '''
"""A toy benchmark: a row is correct when its recorded answer equals its expected one."""
from __future__ import annotations

import json

from slca.config.benchmarks import BENCHMARK_OPTIONS, BenchmarkName
from slca.evaluation.benchmarks import BENCHMARKS, DataRef, Scoring, file_sha256, rows_evaluated
from slca.evaluation.harness import SeedRun, run_grid

BENCHMARK_OPTIONS.register("toy")(BenchmarkName("toy"))


class ToyBenchmark:
    headline = ("accuracy",)

    def _rows(self, inputs):
        return [json.loads(line) for line in inputs.split_path.read_text().splitlines() if line.strip()]

    def data(self, inputs):
        total = len(self._rows(inputs))
        return DataRef(str(inputs.split_path), file_sha256(inputs.split_path), total, rows_evaluated(total, inputs.eval_cfg))

    def scoring(self, inputs):
        return Scoring("toy", "exact answer", None, "none")

    def evaluate(self, generator, inputs):
        rows = self._rows(inputs)

        def run_cell(cell, seed):
            correct = sum(row["answer"] == row["expected"] for row in rows)
            return SeedRun({"accuracy": correct / len(rows)}, len(rows))

        return run_grid(inputs, "toy", run_cell)


BENCHMARKS.register("toy")(ToyBenchmark())
'''


def _plug_in(tmp_path: Path, module: str, source: str) -> None:
    """The toy's module, in tmp_path/plugins (on the fresh interpreter's path)."""
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / f"{module}.py").write_text(source)


def _conf_with(tmp_path: Path, group: str, option: str, yaml: str) -> Path:
    """A copy of conf/ with the toy's option file `conf/<group>/<option>.yaml` holding `yaml`."""
    conf = tmp_path / "conf"
    shutil.copytree(CONF_DIR, conf)
    (conf / group / f"{option}.yaml").write_text(yaml)
    return conf


def _run(tmp_path: Path, code: str) -> dict[str, Any]:
    """`code` in a fresh interpreter with the toy's folder on its path; the JSON it prints last."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(tmp_path / "plugins"), os.environ.get("PYTHONPATH"))))}
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_a_toy_estimator_in_its_own_module_composes_by_name_and_the_estimator_registry_calls_it(tmp_path: Path) -> None:
    _plug_in(tmp_path, "toy_estimator", TOY_ESTIMATOR)
    conf = _conf_with(tmp_path, "estimator", "toy", "name: toy  # Option name.\nvalue: 0.5  # Advantage of every response token.\n")
    found = _run(tmp_path, f'''
        import json
        from pathlib import Path

        import torch

        import toy_estimator  # registers its option and its function before the spec is built
        from slca.algos.registry import get_estimator, list_estimators
        from slca.config.compose import compose_spec
        from slca.config.errors import SpecError

        spec = compose_spec(["estimator=toy", "estimator.value=0.25"], conf_dir=Path({str(conf)!r}))
        mask = torch.tensor([[1, 1, 0], [1, 0, 0]])
        # The trainers' dispatch: the function registered under the spec's estimator name.
        advantages, _ = get_estimator(spec.estimator.name)(torch.zeros(2, 3), mask, [0, 0], config=spec.estimator)
        try:
            compose_spec(["estimator=toy", "estimator.value=2"], conf_dir=Path({str(conf)!r}))
            refused = None
        except SpecError as exc:
            refused = str(exc)
        print(json.dumps({{"estimator": spec.estimator.model_dump(), "type": type(spec.estimator).__name__,
                           "advantages": advantages.tolist(), "registered": list_estimators(), "refused": refused}}))
    ''')
    assert found["estimator"] == {"name": "toy", "value": 0.25} and found["type"] == "ToyEstimator"
    assert found["advantages"] == [[0.25, 0.25, 0.0], [0.25, 0.0, 0.0]]
    assert "toy" in found["registered"] and "slca_grpo" in found["registered"]
    assert found["refused"] == "config error at estimator.value: Input should be less than or equal to 1 (got 2)"


def test_a_toy_backend_in_its_own_module_runs_only_its_stage_and_a_field_it_does_not_honour_is_refused(tmp_path: Path) -> None:
    _plug_in(tmp_path, "toy_backend", TOY_BACKEND)
    conf = _conf_with(tmp_path, "backend", "toy", "name: toy  # Option name.\n")
    found = _run(tmp_path, f'''
        import json
        from pathlib import Path

        import toy_backend  # registers its option and its contract before the spec is built
        from slca.backends.contract import get_backend
        from slca.config.compose import compose_spec
        from slca.config.errors import SpecError
        from slca.pipeline import run_pipeline
        from slca.stage_results import read_result
        from slca.runcontext import StageUnavailable

        spec = compose_spec(["backend=toy"], conf_dir=Path({str(conf)!r}))
        backend = get_backend(spec.backend.name)
        try:
            backend.stage("sft")
            unavailable = None
        except StageUnavailable as exc:
            unavailable = str(exc)
        try:
            compose_spec(["backend=toy", "train.rl.grad_cosine=true"], conf_dir=Path({str(conf)!r}))
            refused = None
        except SpecError as exc:
            refused = str(exc)
        run_dir = Path({str(tmp_path / "run")!r})
        ran = compose_spec(["backend=toy", "logger=none", "run.stages=[rl]", f"run.dir={{run_dir}}"], conf_dir=Path({str(conf)!r}))
        outcomes = [o.status for o in run_pipeline(ran, run_dir, tracker=None, echo=lambda line: None)]
        record = read_result(run_dir, "rl")
        print(json.dumps({{"backend": spec.backend.name, "rl": backend.stage("rl") is toy_backend.rl_stage,
                           "unavailable": unavailable, "refused": refused, "outcomes": outcomes,
                           "recorded": type(record.result).__name__, "steps": record.result.details["steps"],
                           "policy_exists": (run_dir / record.result.model_dir).is_dir()}}))
    ''')
    assert found["backend"] == "toy" and found["rl"] is True
    # Run through the pipeline, its stage writes the rl stage's typed record like any backend's.
    assert found["outcomes"] == ["done"] and found["recorded"] == "RlResult" and found["steps"] == 0 and found["policy_exists"]
    assert found["unavailable"] == "stage 'sft' is not supported by backend 'toy' (it runs: rl)"
    assert found["refused"] == ("config error at train.rl.grad_cosine: set to True but backend=toy does not honour it "
                                "(honoured by: local); the toy trainer has no gradient probe")


def test_a_toy_benchmark_in_its_own_module_is_listed_accepted_by_name_and_evaluates_a_tiny_file(tmp_path: Path) -> None:
    _plug_in(tmp_path, "toy_benchmark", TOY_BENCHMARK)
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"answer": "4", "expected": "4"}\n{"answer": "5", "expected": "6"}\n')
    found = _run(tmp_path, f'''
        import json
        from pathlib import Path

        import toy_benchmark  # registers its name and its benchmark before the spec is validated
        from slca.config.compose import compose_spec
        from slca.evaluation.benchmarks import BENCHMARKS, get_benchmark
        from slca.evaluation.run import evaluate_model

        spec = compose_spec(["eval.benchmark=toy"])
        result = evaluate_model(spec, label="toy", model_dir={str(tmp_path)!r}, generator=None, tokenizer=None,
                                split_path=Path({str(rows)!r}), device="cpu", progress=False)
        print(json.dumps({{"listed": BENCHMARKS.names(), "same": get_benchmark("toy") is toy_benchmark.BENCHMARKS.get("toy"),
                           "rows": result.card.data.rows, "headline": list(result.headline),
                           "accuracy": [cell.metrics["accuracy"].mean for cell in result.cells]}}))
    ''')
    assert "toy" in found["listed"] and "toucan" in found["listed"] and found["same"] is True
    assert found["rows"] == 2 and found["headline"] == ["accuracy"]
    assert found["accuracy"] and all(value == 0.5 for value in found["accuracy"])
