"""`slca eval`: the spec of an evaluation run (docs/eval.md#slca-eval).

An evaluation is a run of its own (`data` and `eval` stages, its own run directory, lock,
provenance and spec.yaml), so it is exactly the pipeline's eval stage. Its base spec is the
evaluated run's spec.yaml (`--from RUN_DIR`) or the composed conf (`--model DIR`, or neither:
the backbone option itself, untrained); overrides apply on top (`eval=protocol_grid`, `eval.seeds=[0,1,2]`, ...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from slca.config.errors import SpecError


def eval_spec(from_run: str | None, model: str | None, overrides: list[str], find: Callable[[str], Path] = Path) -> Any:
    """The resolved spec of an evaluation run; SpecError (one line) when the inputs cannot make one.
    `find` turns --from into a directory (the command line's also takes a unique prefix of a run's id)."""
    from slca.config.compose import compose_spec
    from slca.config.io import load_spec

    if from_run and model:
        raise SpecError("slca eval: give --from RUN_DIR or --model DIR, not both")
    if from_run:
        from_run = str(find(from_run))
        saved = Path(from_run) / "spec.yaml"
        if not saved.is_file():
            raise SpecError(f"slca eval --from {from_run}: not a run directory (no spec.yaml)")
        spec = load_spec(str(saved), overrides)
    else:
        # The eval overrides apply after the experiment's own `eval:` settings, as they do on a saved
        # spec: `eval=protocol_grid` means that grid, not the grid merged under the experiment's values.
        own = [o for o in overrides if o.split("=", 1)[0].split(".", 1)[0] == "eval"]
        spec = compose_spec([o for o in overrides if o not in own])
        if own:
            spec = _with_overrides(spec, own)
    if model and not Path(model).is_dir():
        raise SpecError(f"slca eval --model {model}: not a directory")
    own_dir = any(o.startswith("run.dir=") for o in overrides)
    run = spec.run.model_copy(update={
        "stages": ["data", "eval"],
        "dir": spec.run.dir if own_dir else None,
        "name": f"{spec.run.name or spec.experiment}-eval",
    })
    ev = spec.eval.model_copy(update={"from_run": str(from_run) if from_run else spec.eval.from_run,
                                      "model_dir": str(model) if model else spec.eval.model_dir})
    # Re-validated whole, so the cross-field rules (from_run vs model_dir, n vs temperature) apply.
    from slca.config.compose import validate_spec

    return validate_spec(spec.model_copy(update={"run": run, "eval": ev}).model_dump(mode="json"))


def _with_overrides(spec: Any, overrides: list[str]) -> Any:
    """`spec` with saved-spec overrides applied (`group=option` swaps the whole group)."""
    import tempfile

    from slca.config.io import dump_spec, load_spec

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "spec.yaml"
        path.write_text(dump_spec(spec), encoding="utf-8")
        return load_spec(str(path), overrides)
