"""Each config group's union is built from its registered option models (slca/config/options.py), and
the registry that dispatches a plug point above the config layer holds exactly the names of its
group's options; the verl settings of every filter and down-sampler option are named on its model, and
verl refuses an option (here a toy one, registered in a fresh interpreter) that names none."""

from __future__ import annotations

import pkgutil
import shutil
import subprocess
import sys
import typing
from pathlib import Path
from typing import Literal

import pytest
from pydantic import Field, TypeAdapter, ValidationError

from slca.config.base import SlcaModel
from slca.config.compose import CONF_DIR
from slca.config.groups.backbone import BACKBONE_OPTIONS
from slca.config.groups.backend import BACKEND_OPTIONS
from slca.config.groups.downsample import DOWNSAMPLE_OPTIONS
from slca.config.groups.estimator import ESTIMATOR_OPTIONS
from slca.config.groups.filter import FILTER_OPTIONS
from slca.config.groups.launcher import LAUNCHER_OPTIONS
from slca.config.groups.reward import REWARD_OPTIONS
from slca.config.groups.simulator import SIMULATOR_OPTIONS
from slca.config.options import Options
from slca.config.spec import Spec
from tests.config.models import models_in


def _tags(group: str) -> list[str]:
    """The option names the spec's `group` field accepts, read from its annotation's models."""
    field = Spec.model_fields[group]
    return sorted(v for m in models_in(field.annotation) for v in typing.get_args(m.model_fields[field.discriminator].annotation))


def test_the_function_registries_hold_exactly_the_option_names_of_their_config_groups() -> None:
    import importlib

    from slca.algos.downsample import DOWNSAMPLERS
    from slca.algos.filters import FILTERS
    from slca.algos.registry import list_estimators
    from slca.backends.contract import all_backends
    from slca.launch.base import LAUNCHERS
    from slca.models.backbones import BACKBONE_KINDS, BUILTIN_MODULES
    from slca.rewards import REWARDS
    from slca.sim import SIMULATORS

    for module in (*BUILTIN_MODULES, "slca.launch.local", "slca.launch.slurm"):
        importlib.import_module(module)  # each registers its entries on first import
    pairs = {
        "estimator": (ESTIMATOR_OPTIONS, list_estimators()), "filter": (FILTER_OPTIONS, FILTERS.names()),
        "downsample": (DOWNSAMPLE_OPTIONS, DOWNSAMPLERS.names()), "reward": (REWARD_OPTIONS, REWARDS.names()),
        "simulator": (SIMULATOR_OPTIONS, SIMULATORS.names()), "backbone": (BACKBONE_OPTIONS, BACKBONE_KINDS.names()),
        "backend": (BACKEND_OPTIONS, sorted(b.name for b in all_backends())), "launcher": (LAUNCHER_OPTIONS, LAUNCHERS.names()),
    }
    for group, (options, functions) in pairs.items():
        assert options.names() == functions == _tags(group), group


def test_the_shipped_unions_list_their_options_in_the_order_they_were_written() -> None:
    # The JSON schema and `slca config docs` follow this order (the hand-written unions' order before).
    assert [m.__name__ for m in ESTIMATOR_OPTIONS.models()] == ["GrpoEstimator", "DrGrpoEstimator", "RlooEstimator", "SlcaGrpoEstimator", "ToolPoEstimator"]
    assert [m.__name__ for m in FILTER_OPTIONS.models()] == ["NoFilter", "PreRolloutFilter", "DynamicSamplingFilter"]
    assert [m.__name__ for m in DOWNSAMPLE_OPTIONS.models()] == ["NoDownsample", "MaxVarianceDownsample", "RandomDownsample"]


def test_every_filter_and_down_sampler_option_names_verl_settings_that_exist() -> None:
    for options in (FILTER_OPTIONS, DOWNSAMPLE_OPTIONS):
        for name, model in options.items():
            target = model.backend_settings["verl"]  # type: ignore[attr-defined]
            assert callable(pkgutil.resolve_name(target)), (name, target)


def test_a_fresh_option_registry_builds_a_discriminated_union_and_refuses_a_late_option() -> None:
    options = Options("widget")

    @options.add
    class Round(SlcaModel):
        name: Literal["round", "ball"] = Field("round", description="Option name.")
        radius: float = Field(1.0, gt=0, le=10, description="Radius.")

    @options.add
    class Square(SlcaModel):
        name: Literal["square"] = Field("square", description="Option name.")

    assert options.names() == ["ball", "round", "square"] and options.models() == (Round, Square)
    adapter = TypeAdapter(options.union())
    assert isinstance(adapter.validate_python({"name": "ball", "radius": 2.0}), Round)
    assert isinstance(adapter.validate_python({"name": "square"}), Square)
    with pytest.raises(ValidationError, match="union_tag_invalid|does not match any of the expected tags"):
        adapter.validate_python({"name": "triangle"})
    assert options.union() is options.union()
    with pytest.raises(ValueError, match="widget option 'triangle' registered after the widget union was built"):
        @options.add
        class Triangle(SlcaModel):
            name: Literal["triangle"] = Field("triangle", description="Option name.")


TOY_FILTER = '''
from typing import Literal

from pydantic import Field

from slca.config.base import SlcaModel
from slca.config.groups.filter import FILTER_OPTIONS


@FILTER_OPTIONS.add
class ToyFilter(SlcaModel):
    """Keeps every prompt, and names no verl settings."""

    name: Literal["toy"] = Field("toy", description="Option name.")
'''


def test_verl_refuses_a_filter_option_whose_model_names_no_verl_settings(tmp_path: Path) -> None:
    (tmp_path / "toy_filter.py").write_text(TOY_FILTER)
    shutil.copytree(CONF_DIR, tmp_path / "conf")
    (tmp_path / "conf" / "filter" / "toy.yaml").write_text("name: toy  # Option name.\n")
    code = ("import toy_filter; from pathlib import Path; from slca.config.compose import compose_spec; from slca.config.errors import SpecError\n"
            f"conf = Path({str(tmp_path / 'conf')!r})\n"
            "assert compose_spec(['filter=toy'], conf_dir=conf).filter.name == 'toy'\n"
            "try:\n    compose_spec(['experiment=verl_smoke', 'filter=toy'], conf_dir=conf)\nexcept SpecError as exc:\n    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == ("config error at filter.name: 'toy' names no verl settings (backend_settings on its config model), "
                                  "so backend=verl cannot run it")
