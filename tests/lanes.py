"""How the suite shares two (or more) pytest-xdist workers (`make test` runs `--dist loadgroup`).

A worker pays for every fixture it sets up, so the tests that read one expensive fixture must run on one
worker: the files whose tests use a session-scoped fixture of tests/ (the SLURM cluster, the shared
embedded run, LLaMA-Factory's environment, ...) are joined with every other file using it into one group,
and a file is never split (its module-scoped fixtures are paid once). The groups of the measured long
poles (LONG_POLES) are queued first, then the other groups holding `slow` tests, then the rest, so the long runs start at once and the quick groups fill the other worker around them. A stale
LONG_POLES costs time, never a result. Without xdist nothing changes: the order stays the files' order.

Each worker gets its share of the cores for torch's intra-op threads (OMP_NUM_THREADS, which the
`slca` processes the tests start inherit): two workers with a thread per core each would spin
against each other.
"""

from __future__ import annotations

import os

import pytest

OWN_FIXTURES = "tests."  # module prefix of the fixtures this suite defines (conftests and plugins)
# The files of the longest groups as `python benchmarks/suite_time.py` measured them (a group's time,
# setup included), in the order that started them on alternate workers: the SLURM cluster's jobs with
# the verl twin on it, the learning check's SFT and two RL runs, the shared verl run and its resume,
# LLaMA-Factory's SFT. xdist hands a worker its next group once it has two tests or fewer queued.
# Then the longest groups of `make test-fast` (no slow test): queued last, they would leave one worker
# alone at the end.
LONG_POLES = (
    "tests/launch/test_verl_ray_jobs.py",
    "tests/learning/test_learning_check.py",
    "tests/backends/verl/test_verl_run_on_cpu.py",
    "tests/backends/llamafactory/test_sft_on_cpu.py",
    "tests/config/test_hardening.py",
    "tests/config/test_compose.py",
)
# Session fixtures that every worker may set up: they share their work through the file system themselves,
# or keep it per worker (each composition once).
WORKER_SAFE = frozenset({"tests.stages:stage_cache", "tests.compositions:each_composition_once"})


def _shared_fixtures(item: pytest.Item) -> set[str]:
    """`module:name` of the session-scoped fixtures of this suite that `item` uses."""
    shared = set()
    for defs in item._fixtureinfo.name2fixturedefs.values():  # noqa: SLF001 - pytest exposes no public accessor
        fixture = defs[-1]
        module = getattr(fixture.func, "__module__", "") or ""
        name = f"{module}:{fixture.argname}"
        if fixture.scope == "session" and module.startswith(OWN_FIXTURES) and name not in WORKER_SAFE:
            shared.add(name)
    return shared


def lane_groups(items: list[pytest.Item]) -> dict[str, str]:
    """file path -> group name: connected components of files and the shared fixtures their tests use."""
    parent: dict[str, str] = {}

    def find(node: str) -> str:
        while parent.setdefault(node, node) != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for item in items:
        path = item.nodeid.split("::", 1)[0]
        for fixture in _shared_fixtures(item):
            parent[find(path)] = find(fixture)
    files = [item.nodeid.split("::", 1)[0] for item in items]
    # A group is named after its first file in collection order (tests/a/test_b.py: a/test_b), stable
    # and short in xdist's node ids.
    first: dict[str, str] = {}
    for path in files:
        first.setdefault(find(path), path.removeprefix("tests/").removesuffix(".py"))
    return {path: first[find(path)] for path in files}


def pytest_configure(config: pytest.Config) -> None:
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers and "OMP_NUM_THREADS" not in os.environ:
        threads = max(1, (os.cpu_count() or 1) // workers)
        os.environ["OMP_NUM_THREADS"] = str(threads)
        import torch  # noqa: PLC0415 - already imported by the time tests run; set it for this process too

        torch.set_num_threads(threads)


@pytest.hookimpl(tryfirst=True)  # before xdist's worker hook turns xdist_group marks into node ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):  # set on xdist's workers (they see dist=no), who collect
        return
    groups = lane_groups(items)
    rank = {group: len(LONG_POLES) for group in groups.values()}
    slow = {group: 0 for group in groups.values()}
    for path, group in groups.items():
        if path in LONG_POLES:
            rank[group] = min(rank[group], LONG_POLES.index(path))
    for item in items:
        group = groups[item.nodeid.split("::", 1)[0]]
        slow[group] += item.get_closest_marker("slow") is not None
        item.add_marker(pytest.mark.xdist_group(group))
    position = {item.nodeid: i for i, item in enumerate(items)}

    def queue_order(item: pytest.Item) -> tuple[int, int, int]:
        group = groups[item.nodeid.split("::", 1)[0]]
        return rank[group], -slow[group], position[item.nodeid]

    items.sort(key=queue_order)
