"""Documentation that cannot go stale: every shell command in the code blocks of README.md, docs/*.md and
sweeps/README.md is run here, in the order the documents give them, in a scratch directory.

Commands that would train, submit or serve run in the form that does all the rest: `slca run` with
`--dry-run` (the backend's own dry run: spec, provenance, verl config), `slca eval` with `--cfg job`,
`slca sweep` and `slca run -m` as the planning that composes and validates every run before anything
is submitted. Placeholders become real paths (`<stamp>` the run an earlier command made, model folders
empty directories). The slca commands that read what only finished runs hold (`results`, `report`, ...)
are parsed by slca's parser, not run (RUN_IN_FULL says why); other programs that cannot run here are
listed in CANNOT_RUN_PROGRAMS with the reason, and each must still be named by a documented command."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.badinput import run_cli

pytestmark = [pytest.mark.slow, pytest.mark.verl]  # the verl dry runs of paper_slca import verl

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "sweeps" / "README.md"]
SHELL_BLOCK = re.compile(r"^```(?:bash|sh|shell)\n(.*?)^```", re.S | re.M)
YAML_BLOCK = re.compile(r"^```yaml\n(.*?)^```", re.S | re.M)
OVERLAY_NAME = re.compile(r"^# @package _global_\n# ([\w.-]+\.yaml)\b")

# Programs other than slca that cannot run here, with why (every command of theirs is left out).
CANNOT_RUN_PROGRAMS = {
    "make": "its targets build environments (network at install time), the whole demo or this suite itself",
    "huggingface-cli": "downloads from the Hugging Face hub (network)",
    "vllm": "serves a model with vLLM (a GPU)",
}
# The slca commands run in full (in the forms above). Every other one (results, report, data, ...) reads
# the records of finished runs and sweeps, or data and models, that no documented command makes here:
# its arguments are parsed by slca's own parser, so a renamed flag or command still fails this test.
RUN_IN_FULL = ("run", "eval", "sweep", "config")
# Model folders the documents name: empty directories here (`--cfg job` loads no weights).
MODEL_PLACEHOLDERS = ("path/to/model", "path/to/model_dir", "/models/Qwen3-4B", "models/Qwen3-4B", "$BASE")


@dataclass(frozen=True)
class Documented:
    where: str  # file:line
    words: tuple[str, ...]  # the command as written: continuations joined, its comment left out

    @property
    def text(self) -> str:
        return " ".join(self.words)


def documented_commands() -> list[Documented]:
    found = []
    for doc in DOCS:
        source = doc.read_text(encoding="utf-8")
        for block in SHELL_BLOCK.finditer(source):
            first_line = source.count("\n", 0, block.start(1)) + 1
            pending, start = "", 0
            for offset, line in enumerate(block.group(1).splitlines()):
                start = start if pending else first_line + offset
                pending += line.rstrip()
                if pending.endswith("\\"):
                    pending = pending[:-1] + " "
                    continue
                words = shlex.split(pending, comments=True)
                pending = ""
                if words:
                    found.append(Documented(f"{doc.relative_to(REPO)}:{start}", tuple(words)))
    return found


def overlay_examples() -> dict[str, str]:
    """file name -> text of each example overlay file the documents show (a YAML block that starts with
    the overlay header and a comment naming the file)."""
    examples = {}
    for doc in DOCS:
        for block in YAML_BLOCK.finditer(doc.read_text(encoding="utf-8")):
            named = OVERLAY_NAME.match(block.group(1))
            if named:
                examples[named.group(1)] = block.group(1)
    return examples


def _resolved(word: str, cwd: Path) -> str:
    if word in MODEL_PLACEHOLDERS:
        folder = cwd / "models" / word.strip("/")
        folder.mkdir(parents=True, exist_ok=True)
        return str(folder)
    if word in ("RUN", "$RUN"):  # docs/eval.md's names for a run directory
        word = "runs/embedded_demo/<stamp>"
    if "<stamp>" in word:
        before, after = word.split("<stamp>", 1)
        made = sorted(p.name for p in (cwd / before).iterdir())  # the runs an earlier command made there
        assert made, f"no run under {before} for {word}: the documents use it before any command makes one"
        word = before + made[0] + after
    return word


def _run(command: Documented, cwd: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Run one documented slca command in its runnable form; "" when it succeeded, else why not."""
    from slca.launch.grid import load_sweep_file
    from slca.launch.sweep import multirun_sweep, plan_runs

    words = [_resolved(w, cwd) for w in command.words]
    if words[0] != "slca":
        return "neither run here nor listed in CANNOT_RUN_PROGRAMS"
    argv = words[1:]
    if argv[0] not in RUN_IN_FULL or "--compare" in argv:  # `eval --compare` reads two finished evaluations
        from slca.cli import build_parser

        capsys.readouterr()
        try:
            build_parser().parse_args(argv)
        except SystemExit as exc:
            return f"does not parse (exit {exc.code}): {capsys.readouterr().err.strip()}"
        return ""
    if argv[:2] == ["run", "-m"]:
        sweep, extra, _ = multirun_sweep(argv[2:])
        return "" if plan_runs(sweep, extra, cwd / "planned") else "no run planned"
    if argv[0] == "sweep":
        return "" if plan_runs(load_sweep_file(Path(argv[1])), argv[2:], cwd / "planned") else "no run planned"
    if argv[0] == "run" and "--cfg" not in argv and "--dry-run" not in argv:
        argv.append("--dry-run")
    if argv[0] == "eval" and "--cfg" not in argv:
        argv += ["--cfg", "job"]
    result = run_cli(argv, capsys)
    return "" if result.code == 0 else f"exit {result.code}: {result.err.strip()}"


def test_every_documented_command_runs_here_or_is_listed_with_why_it_cannot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # runs/ and the caches land here
    (tmp_path / "sweeps").symlink_to(REPO / "sweeps")  # the documents name sweep files from the checkout's root
    for name, text in overlay_examples().items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    commands = documented_commands()
    assert len(commands) > 30
    stale = sorted(set(CANNOT_RUN_PROGRAMS) - {c.words[0] for c in commands})
    assert not stale, f"CANNOT_RUN_PROGRAMS names programs no document runs any more: {stale}"
    failures, done = [], set()
    for command in commands:
        if command.words[0] in CANNOT_RUN_PROGRAMS or command.words in done:  # a command shown twice is run once
            continue
        done.add(command.words)
        why = _run(command, tmp_path, capsys)
        if why:
            failures.append(f"{command.where}: {command.text}\n    {why}")
    assert not failures, "documented commands that fail:\n" + "\n".join(failures)


def test_the_readme_names_every_shipped_experiment_and_shows_an_overlay_file_that_validates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from slca.config.compose import options

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    listed = next(p for p in readme.split("\n\n") if "Experiments in `conf/experiment/`" in " ".join(p.split()))
    assert [name for name in options("experiment") if f"`{name}`" not in listed] == []
    examples = overlay_examples()
    assert "my_ablation.yaml" in examples
    (tmp_path / "my_ablation.yaml").write_text(examples["my_ablation.yaml"], encoding="utf-8")
    result = run_cli(["config", "validate", str(tmp_path / "my_ablation.yaml")], capsys)
    assert result.code == 0 and "valid (experiment my_ablation)" in result.out, result.err
