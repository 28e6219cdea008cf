"""A CPU platform for verl 0.9.1 (`VERL_PLATFORM=cpu`): for the test suite and for debugging a verl
spec on a machine without GPUs (`backend.device=cpu`).

verl asks its platform for a device module that stands in for `torch.cuda`; on CPU, streams,
events and synchronisation come from `torch.cpu`, and what has no CPU meaning (caches, memory
fractions, IPC) is a no-op or reports the process's memory from psutil.
"""

from __future__ import annotations

import contextlib
import platform as host
from types import ModuleType, SimpleNamespace
from typing import Any, Optional

import psutil
import torch
from verl.plugin.platform import PlatformBase, PlatformRegistry

NAME = "cpu"


def _noop(*_args: Any, **_kwargs: Any) -> None:
    return None


def _process_rss(*_args: Any, **_kwargs: Any) -> int:
    return psutil.Process().memory_info().rss


def _mem_get_info(*_args: Any, **_kwargs: Any) -> tuple[int, int]:
    memory = psutil.virtual_memory()
    return memory.available, memory.total


def _cpu_device_module() -> Any:
    """`torch.cpu` plus what verl calls on `torch.cuda` that `torch.cpu` lacks."""
    return SimpleNamespace(
        is_available=lambda: True,
        device_count=lambda: 1,
        current_device=lambda: 0,
        set_device=_noop,
        synchronize=torch.cpu.synchronize,
        current_stream=torch.cpu.current_stream,
        stream=torch.cpu.stream,
        Stream=torch.cpu.Stream,
        Event=torch.cpu.Event,
        empty_cache=_noop,
        ipc_collect=_noop,
        set_per_process_memory_fraction=_noop,
        manual_seed=torch.manual_seed,
        manual_seed_all=torch.manual_seed,
        get_rng_state=lambda *a, **k: torch.get_rng_state(),
        set_rng_state=lambda state, *a, **k: torch.set_rng_state(state),
        memory_allocated=_process_rss,
        memory_reserved=_process_rss,
        max_memory_allocated=_process_rss,
        max_memory_reserved=_process_rss,
        reset_peak_memory_stats=_noop,
        mem_get_info=_mem_get_info,
        get_device_name=lambda *a, **k: host.processor() or "cpu",
    )


class CpuPlatform(PlatformBase):
    """verl on CPU cores: device "cpu", collectives over gloo, Ray's GPU slots as logical units."""

    def __init__(self) -> None:
        super().__init__()
        self._module = _cpu_device_module()

    @property
    def device_name(self) -> str:
        return "cpu"

    @property
    def vendor_name(self) -> str:
        return "cpu"

    @property
    def device_module(self) -> ModuleType:
        return self._module

    def is_available(self) -> bool:
        return True

    def is_platform_available(self, use_smi_check: bool = False) -> bool:
        # Never auto-detected: a GPU machine must not fall onto the CPU; VERL_PLATFORM=cpu selects it.
        return False

    def current_device(self) -> Any:
        # verl moves tensors and modules with `.to(get_device_id())`: on CPU that must name the CPU.
        return "cpu"

    def device_count(self) -> int:
        return 1

    def set_device(self, device_index: int) -> None:
        return None

    def synchronize(self, device_index: Optional[int] = None) -> None:
        return None

    def manual_seed(self, seed: int) -> None:
        torch.manual_seed(seed)

    def manual_seed_all(self, seed: int) -> None:
        torch.manual_seed(seed)

    def set_allocator_settings(self, settings: str) -> None:
        return None

    def empty_cache(self) -> None:
        return None

    def get_device_capability(self, device_index: int = 0) -> tuple[Optional[int], Optional[int]]:
        return None, None

    def communication_backend_name(self) -> str:
        return "gloo"

    def visible_devices_envvar(self) -> str:
        # Ray sets this for its logical GPU slots; nothing on CPU reads it.
        return "CUDA_VISIBLE_DEVICES"

    def nvtx_range(self, msg: str) -> Any:
        return contextlib.nullcontext()

    def profiler_start(self) -> None:
        return None

    def profiler_stop(self) -> None:
        return None

    def cudart(self) -> Any:
        return None

    def ray_resource_name(self) -> str:
        # Ray's logical GPU slots (ray_init.num_gpus) are what verl's resource pools count.
        return "GPU"

    def ray_resource_options(self, num_gpus: float) -> dict[str, Any]:
        return {"num_gpus": num_gpus}

    def ray_noset_envvars(self) -> list[str]:
        return []

    def is_ipc_supported(self) -> bool:
        return False

    def rollout_env_vars(self) -> dict[str, str]:
        return {}


def register() -> None:
    """Make the platform selectable as `VERL_PLATFORM=cpu` (idempotent)."""
    if PlatformRegistry.get(NAME) is not CpuPlatform:
        PlatformRegistry.register(platform=NAME)(CpuPlatform)
