"""The backend contract: every spec field is honoured or refused by every backend, a refused field
set to a non-default value is refused at composition in one line, a backend runs only its stages,
and `--dry-run` means one thing (everything written, the command printed, exit 0) for all."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from slca.backends.contract import SHARED_SECTIONS, STAGE_SECTIONS, Backend, all_backends, covers
from slca.config.compose import compose_spec
from slca.config.errors import SpecError
from slca.config.spec import Spec
from tests.badinput import run_cli
from tests.config.models import models_in


def _leaf_paths(model: type = Spec, prefix: str = "") -> set[str]:
    """Every dotted field path of the spec, every option of every union opened."""
    paths: set[str] = set()
    for name, info in model.model_fields.items():
        inner = models_in(info.annotation)
        if inner:
            for sub in inner:
                paths |= _leaf_paths(sub, f"{prefix}{name}.")
        else:
            paths.add(prefix + name)
    return paths


def _undeclared(backend: Backend, paths: set[str]) -> list[str]:
    """Fields the backend neither honours, refuses nor leaves to a stage it does not run."""
    return sorted(p for p in paths if not (backend.honours_path(p) or p in backend.refuses or backend.outside_its_stages(p)))


LEAVES = _leaf_paths()
BACKENDS = all_backends()


def test_every_backend_registers_local_verl_and_llamafactory_by_their_option_names() -> None:
    assert sorted(b.name for b in BACKENDS) == ["llamafactory", "local", "verl"]
    backend_options = {p.stem for p in (Path(__file__).resolve().parents[2] / "conf" / "backend").glob("*.yaml")}
    assert backend_options == {b.name for b in BACKENDS}


@pytest.mark.parametrize("backend", BACKENDS, ids=lambda b: b.name)
def test_every_field_of_every_config_model_is_honoured_or_refused_by_every_backend(backend: Backend) -> None:
    assert _undeclared(backend, LEAVES) == []
    assert not [p for p in backend.refuses if backend.honours_path(p)], "a field is both honoured and refused"


@pytest.mark.parametrize("backend", BACKENDS, ids=lambda b: b.name)
def test_a_backend_lists_the_fields_it_trains_with_one_by_one_so_a_new_one_is_not_honoured_by_default(backend: Backend) -> None:
    # Whole sections only where code every backend shares reads them; elsewhere, leaves that exist.
    for entry in backend.honours:
        assert entry in SHARED_SECTIONS or entry in LEAVES, entry
    assert all(path in LEAVES for path in backend.refuses)
    for section in ("train.rl", "train.sft", "filter"):
        new = f"{section}.a_field_added_tomorrow"
        assert _undeclared(backend, {new}) == ([] if backend.outside_its_stages(new) else [new])


def test_a_field_verl_does_not_honour_set_to_a_non_default_value_is_refused_naming_it_and_who_honours_it() -> None:
    overrides = {"train.rl.eval_every_steps": "5", "train.rl.save_every_steps": "3", "train.rl.grad_cosine": "true"}
    for path, value in overrides.items():
        with pytest.raises(SpecError) as info:
            compose_spec(["experiment=verl_smoke", f"{path}={value}"])
        assert str(info.value).startswith(f"config error at {path}: set to {value.capitalize() if value == 'true' else value} but "
                                          "backend=verl does not honour it (honoured by: local); ")
    compose_spec(["experiment=embedded_smoke", *(f"{p}={v}" for p, v in overrides.items())])  # the local trainer honours them


def test_filter_max_generation_rounds_is_refused_under_verl_only_when_it_differs_from_its_default() -> None:
    compose_spec(["experiment=verl_smoke", "filter=dynamic_sampling", "filter.max_generation_rounds=4"])
    with pytest.raises(SpecError, match=r"^config error at filter\.max_generation_rounds: set to 2 but backend=verl"):
        compose_spec(["experiment=verl_smoke", "filter=dynamic_sampling", "filter.max_generation_rounds=2"])


def test_composing_a_verl_spec_imports_neither_torch_nor_verl() -> None:
    code = ("import sys; from slca.config.compose import compose_spec; compose_spec(['experiment=paper_slca']); "
            "print(sorted(m for m in ('torch', 'verl', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120).stdout
    assert out.strip() == "[]"


def test_the_sections_of_a_stage_are_outside_the_contract_only_of_a_backend_that_does_not_run_it() -> None:
    for backend in BACKENDS:
        for stage, sections in STAGE_SECTIONS.items():
            assert all(backend.outside_its_stages(s + ".x") is (stage not in backend.stages) for s in sections)
    assert covers("train.rl", "train.rl.n") and not covers("train.rl", "train.rlx")


def test_dry_run_on_the_local_backend_writes_the_run_directory_prints_the_command_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    result = run_cli(["run", "--dry-run", "experiment=embedded_smoke", f"run.dir={run_dir}", "logger=none"], capsys)
    assert result.code == 0, result.err
    assert (run_dir / "spec.yaml").is_file() and (run_dir / "provenance.json").is_file()
    assert result.out.splitlines()[-1] == f"slca run --spec {run_dir / 'spec.yaml'}"
    assert not (run_dir / "sft").exists()  # nothing trained
