"""Runs ACEBench's own evaluation code on given outputs, inside ACEBench's environment
(docs/eval.md#checking-the-checker-against-acebench).

This file is executed by that environment's interpreter (`python upstream.py ACEBENCH_DIR CASES.json
OUT.json`), never imported by slca: it imports only the standard library and the vendored
ACEBench code, run as vendored (unchanged but for the two `eval`s its decoder ran on arguments,
which now raise: third_party/acebench/VENDORED.md). CASES holds, per (category, model name), one output text per entry of
the category in file order; each batch is written where ACEBench's `eval_main.py` reads model
results (`result_all/result_en/<model>/data_<category>_result.json`, in a scratch directory beside
a link to the vendored data; its spreadsheets go there too) and scored by eval_main's own function for the category. An entry is
correct unless ACEBench's score file lists its id. When ACEBench's code raises on a batch, each entry
of it is scored alone, so the entries it raises on are found and named.

An agent batch (category agent_*) holds, instead of texts, one episode per entry as ACEBench's
inference writes it (`result`: the end state records, `process`: the messages sent to the
scenario); each is scored alone by eval_main's agent_eval, whose two figures are that entry's
end-to-end verdict and process accuracy.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any


def _write_lines(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _score(main: Any, category: str, model: str, prompts: list[dict[str, Any]], answers: list[dict[str, Any]],
           texts: list[str]) -> list[str]:
    """The ids ACEBench's own scorer marks wrong (raises what ACEBench's code raises)."""
    paths = main.get_paths("en")
    results = [{"id": p["id"], "result": t} for p, t in zip(prompts, texts)]
    _write_lines(Path(main.build_result_path(paths["INPUT_PATH"], model, category, "_result.json")), results)
    if "special" in category:
        main.special_eval(results, prompts, answers, category, model, paths)
    elif "normal_multi_turn" in category:
        main.normal_multi_turn_eval(results, prompts, answers, category, model, paths)
    else:
        main.normal_single_turn_eval(results, prompts, answers, category, model, paths)
    score = Path(paths["OUTPUT_PATH"]) / model / f"data_{category}_score.json"
    lines = [json.loads(line) for line in score.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [str(line["id"]) for line in lines[1:]]


def _agent_verdicts(main: Any, batch: dict[str, Any], prompts: list[dict[str, Any]],
                    answers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ACEBench's end-to-end verdict and process accuracy of each episode of one agent batch."""
    out = []
    for i, (prompt, episode) in enumerate(zip(prompts, batch["episodes"])):
        model = f"{batch['model']}_{i}"
        Path(main.OUTPUT_PATH, model).mkdir(parents=True, exist_ok=True)  # agent_eval writes there before creating it
        result = {"id": prompt["id"], "result": episode["result"], "process": episode["process"]}
        try:
            accuracy, process = main.agent_eval([result], [prompt], [answers[i]], batch["category"], model)
            out.append({"category": batch["category"], "model": batch["model"], "id": prompt["id"],
                        "valid": accuracy == 1.0, "process": process, "raised": None})
        except Exception as exc:
            out.append({"category": batch["category"], "model": batch["model"], "id": prompt["id"], "valid": None,
                        "process": None, "raised": f"{type(exc).__name__}: {exc}"[:200]})
    return out


def main(acebench_dir: str, cases_path: str, out_path: str) -> None:
    root = Path(acebench_dir).resolve()
    batches = json.loads(Path(cases_path).read_text(encoding="utf-8"))
    verdicts: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as scratch:
        # ACEBench also writes spreadsheets to ../result_excel: one level down keeps them in the scratch directory.
        work = Path(scratch) / "run"
        work.mkdir()
        os.chdir(work)
        os.symlink(root / "data_all", "data_all")
        sys.path.insert(0, str(root))
        import eval_main  # ACEBench's own entry point

        eval_main.OUTPUT_PATH = eval_main.get_paths("en")["OUTPUT_PATH"]  # set by its __main__ block
        eval_main.language = "en"  # likewise; agent_eval reads it
        for batch in batches:
            category, model = batch["category"], batch["model"]
            prompts = eval_main.load_file(eval_main.build_data_path(eval_main.get_paths("en")["PROMPT_PATH"], category))
            answers = eval_main.load_file(eval_main.build_data_path(eval_main.get_paths("en")["POSSIBLE_ANSWER_PATH"], category))
            if category.startswith("agent_"):
                n = len(batch["episodes"])
                verdicts.extend(_agent_verdicts(eval_main, batch, prompts[:n], answers[:n]))
                continue
            texts = batch["texts"]
            prompts, answers = prompts[:len(texts)], answers[:len(texts)]
            try:
                wrong = set(_score(eval_main, category, model, prompts, answers, texts))
                raised = {}
            except Exception:  # ACEBench's code failed on some entry: find which, one at a time
                wrong, raised = set(), {}
                for i, prompt in enumerate(prompts):
                    try:
                        wrong.update(_score(eval_main, category, f"{model}_{i}", [prompt], [answers[i]], [texts[i]]))
                    except Exception as exc:
                        raised[prompt["id"]] = f"{type(exc).__name__}: {exc}"[:200]
            for prompt in prompts:
                verdicts.append({"category": category, "model": model, "id": prompt["id"],
                                 "valid": None if prompt["id"] in raised else prompt["id"] not in wrong,
                                 "raised": raised.get(prompt["id"])})
    tmp = Path(out_path).with_suffix(".tmp")
    tmp.write_text(json.dumps(verdicts), encoding="utf-8")
    os.replace(tmp, out_path)


if __name__ == "__main__":
    main(*sys.argv[1:4])
