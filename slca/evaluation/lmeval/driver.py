"""Runs lm-evaluation-harness on one job file, in a process of its own (`python -m slca.evaluation.lmeval.driver JOB`).

Started by slca.evaluation.lmeval.run with the hub closed (HF_HUB_OFFLINE, HF_DATASETS_OFFLINE)
unless eval.lm_eval.offline is false; never imported by slca. Two modes, each writing one JSON file
(`out`):

    describe: the leaf tasks of the requested tasks and groups, each with its version, number of
              evaluation documents and the sha256 of those documents (for the protocol card);
    evaluate: the harness's own result (`simple_evaluate`) for the model directory, less the samples.

Any failure ends with one line on stderr (the last one), which the caller shows.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any


def task_manager(job: dict[str, Any]) -> Any:
    """A TaskManager over slca's and the user's task folders, and the harness's own only when a task needs them
    (indexing the harness's thousands of YAML files is most of a small run's time)."""
    from lm_eval.tasks import TaskManager

    local = TaskManager(include_path=job["include_paths"], include_defaults=False)
    known = set(local.all_tasks)
    if all(name in known for name in job["tasks"]):
        return local
    return TaskManager(include_path=job["include_paths"])


def task_version(task: Any) -> str:
    metadata = getattr(getattr(task, "config", None), "metadata", None)
    if isinstance(metadata, dict) and "version" in metadata:
        return str(metadata["version"])
    return str(getattr(task, "VERSION", None))


def describe(job: dict[str, Any]) -> dict[str, Any]:
    out = []
    # load(): every leaf task of the requested tasks and groups, by name.
    for name, task in sorted(task_manager(job).load(job["tasks"])["tasks"].items()):
        digest = hashlib.sha256()
        docs = 0
        for doc in task.eval_docs:
            digest.update(json.dumps(doc, sort_keys=True, default=str, ensure_ascii=False).encode("utf-8") + b"\n")
            docs += 1
        out.append({"name": name, "version": task_version(task), "docs": docs, "sha256": digest.hexdigest()})
    return {"leaves": out}


def evaluate(job: dict[str, Any]) -> dict[str, Any]:
    import lm_eval

    seed = job["seed"]
    result = lm_eval.simple_evaluate(
        model=job["model"], model_args={"pretrained": job["model_dir"]}, tasks=job["tasks"], num_fewshot=job["num_fewshot"],
        batch_size=job["batch_size"], device=job["device"], limit=job["limit"], log_samples=False, task_manager=task_manager(job),
        random_seed=seed, numpy_random_seed=seed, torch_random_seed=seed, fewshot_random_seed=seed,
    )
    if result is None:
        raise RuntimeError("the harness returned no result")
    return {k: result[k] for k in ("results", "groups", "group_subtasks", "versions", "n-shot", "n-samples", "higher_is_better") if k in result}


MODES = {"describe": describe, "evaluate": evaluate}


def main(argv: list[str]) -> int:
    job = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    try:
        answer = MODES[job["mode"]](job)
    except Exception as exc:  # noqa: BLE001 - the caller shows this one line
        print(f"lm-evaluation-harness: {type(exc).__name__}: {' '.join(str(exc).split())[:500]}", file=sys.stderr)
        return 1
    out = Path(job["out"])
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(answer, default=str), encoding="utf-8")
    tmp.replace(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
