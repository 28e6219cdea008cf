"""Checkpoints: atomic layout, weights-only loading, RNG restore, and bit-identical SFT resume on CPU."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from slca.backends.local.checkpoint import (
    capture_rng_states,
    list_checkpoints,
    load_latest_checkpoint,
    restore,
    restore_rng_states,
    save_checkpoint,
)
from slca.backends.local.sft import run_sft
from slca.config.groups.train import SftConfig


def _draws():
    return random.random(), float(np.random.rand()), float(torch.rand(()))


def test_save_load_restores_everything_and_keeps_the_newest(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0 / (s + 1))
    for _ in range(3):
        model(torch.randn(5, 4)).sum().backward()
        opt.step()
        sched.step()
    extra = {"filter": {"3": 2, "9": 0}, "position": [1, 7], "note": "x", "t": torch.arange(3)}
    for step in (1, 2, 3):
        save_checkpoint(tmp_path, model=model, optimizer=opt, scheduler=sched, extra_state=extra, step=step, keep_last=2)
    expected = _draws()
    assert [s for s, _ in list_checkpoints(tmp_path)] == [2, 3]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]

    # A half-written checkpoint (temp dir, never renamed) is ignored and cleaned up.
    (tmp_path / ".tmp-step_000000004-abc").mkdir()
    ckpt = load_latest_checkpoint(tmp_path)
    assert ckpt.step == 3 and not (tmp_path / ".tmp-step_000000004-abc").exists()
    assert ckpt.extra_state["filter"] == {"3": 2, "9": 0} and ckpt.extra_state["position"] == [1, 7]
    assert torch.equal(ckpt.extra_state["t"], torch.arange(3))
    # state.pt needs nothing beyond what weights_only loading allows.
    torch.load(ckpt.path / "state.pt", weights_only=True)

    fresh = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 2))
    fopt = torch.optim.AdamW(fresh.parameters(), lr=0.1)
    fsched = torch.optim.lr_scheduler.LambdaLR(fopt, lambda s: 1.0 / (s + 1))
    restore(ckpt, model=fresh, optimizer=fopt, scheduler=fsched)
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), fresh.state_dict().values()))
    assert fsched.last_epoch == sched.last_epoch and fopt.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    assert torch.equal(fopt.state_dict()["state"][0]["exp_avg"], opt.state_dict()["state"][0]["exp_avg"])
    assert _draws() == expected  # RNG states captured at save time, restored by restore()


def test_rng_states_roundtrip():
    states = capture_rng_states()
    first = _draws()
    restore_rng_states(states)
    assert _draws() == first


def test_load_latest_on_empty_dir_is_none(tmp_path):
    assert load_latest_checkpoint(tmp_path) is None
    assert load_latest_checkpoint(tmp_path / "missing") is None


class _Crash(Exception):
    pass


def test_sft_resume_is_bit_identical(tiny_path, synth_rows, tmp_path):
    from slca.models.load import load_backbone

    rows = synth_rows[:40]
    cfg = SftConfig(epochs=2, batch_size=8, micro_batch_size=4, lr=5e-3, max_length=384, save_every_steps=3)

    model, tok = load_backbone(tiny_path)
    ref = run_sft(model, tok, rows, cfg, tmp_path / "ref", seed=7, progress=False)
    assert ref["steps"] == 10

    def crash_at_7(m):
        if m["step"] == 7:  # after step 7 ran; the newest checkpoint is step 6
            raise _Crash

    model, tok = load_backbone(tiny_path)
    with pytest.raises(_Crash):
        run_sft(model, tok, rows, cfg, tmp_path / "run", seed=7, progress=False, on_step=crash_at_7)
    assert [s for s, _ in list_checkpoints(tmp_path / "run" / "checkpoints")] == [5, 6]
    model, tok = load_backbone(tiny_path)  # a new process starts from the initial weights
    res = run_sft(model, tok, rows, cfg, tmp_path / "run", seed=7, progress=False)
    assert res["resumed_from_step"] == 6 and res["steps_run"] == 4
    assert res["final_loss"] == ref["final_loss"]

    w_ref = load_file(tmp_path / "ref" / "model" / "model.safetensors")
    w_res = load_file(tmp_path / "run" / "model" / "model.safetensors")
    assert w_ref.keys() == w_res.keys()
    assert all(torch.equal(w_ref[k], w_res[k]) for k in w_ref)
    a = torch.load(list_checkpoints(tmp_path / "ref" / "checkpoints")[-1][1] / "state.pt", weights_only=True)
    b = torch.load(list_checkpoints(tmp_path / "run" / "checkpoints")[-1][1] / "state.pt", weights_only=True)
    assert all(torch.equal(a["optimizer"]["state"][k]["exp_avg_sq"], b["optimizer"]["state"][k]["exp_avg_sq"]) for k in a["optimizer"]["state"])
    assert a["scheduler"] == b["scheduler"]

    # Different data or settings: refuse rather than silently mixing runs.
    model, tok = load_backbone(tiny_path)
    with pytest.raises(ValueError, match="refusing to resume"):
        run_sft(model, tok, rows[:-8], cfg, tmp_path / "run", seed=7, progress=False)
    with pytest.raises(ValueError, match="refusing to resume"):
        run_sft(model, tok, rows, cfg.model_copy(update={"lr": 1e-3}), tmp_path / "run", seed=7, progress=False)


def _damage_truncate(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _damage_empty(path):
    path.write_bytes(b"")


def _damage_garble(path):
    data = bytearray(path.read_bytes())
    data[:16] = b"\xff" * 16
    path.write_bytes(bytes(data))


def _damage_remove(path):
    path.unlink()


@pytest.mark.parametrize("damage", [_damage_truncate, _damage_empty, _damage_garble, _damage_remove], ids=["truncated", "empty", "garbled", "removed"])
@pytest.mark.parametrize("victim", ["state.pt", "model.safetensors"])
def test_a_damaged_newest_checkpoint_falls_back_to_the_newest_intact_one_with_a_note(tmp_path, victim, damage):
    model = torch.nn.Linear(4, 3)
    for step in (1, 2, 3):
        with torch.no_grad():
            model.weight.fill_(float(step))
        save_checkpoint(tmp_path, model=model, extra_state={"at": step}, step=step, keep_last=None)
    damage(tmp_path / "step_000000003" / victim)
    notes = []
    ckpt = load_latest_checkpoint(tmp_path, note=notes.append)
    assert ckpt.step == 2 and ckpt.extra_state == {"at": 2}
    fresh = torch.nn.Linear(4, 3)
    ckpt.load_model(fresh)
    assert torch.equal(fresh.weight, torch.full((3, 4), 2.0))
    assert len(notes) == 1 and "step_000000003" in notes[0] and victim in notes[0] and "trying step_000000002" in notes[0]

    # Every checkpoint damaged: nothing to resume from, said once per skipped checkpoint.
    for step in (1, 2):
        damage(tmp_path / f"step_{step:09d}" / victim)
    notes.clear()
    assert load_latest_checkpoint(tmp_path, note=notes.append) is None
    assert len(notes) == 3 and "starting from scratch" in notes[-1]


def test_sft_resume_past_a_truncated_checkpoint_is_still_bit_identical(tiny_path, synth_rows, tmp_path, capsys):
    from slca.models.load import load_backbone

    rows = synth_rows[:24]
    cfg = SftConfig(epochs=1, batch_size=4, micro_batch_size=4, lr=5e-3, max_length=384, save_every_steps=2, keep_checkpoints=3)
    model, tok = load_backbone(tiny_path)
    run_sft(model, tok, rows, cfg, tmp_path / "ref", seed=3, progress=False)

    def crash_at_5(m):
        if m["step"] == 5:
            raise _Crash

    model, tok = load_backbone(tiny_path)
    with pytest.raises(_Crash):
        run_sft(model, tok, rows, cfg, tmp_path / "run", seed=3, progress=False, on_step=crash_at_5)
    ckpts = list_checkpoints(tmp_path / "run" / "checkpoints")
    assert [s for s, _ in ckpts] == [2, 4]
    _damage_truncate(ckpts[-1][1] / "model.safetensors")  # the newest one: a disk filled up mid-copy

    model, tok = load_backbone(tiny_path)
    capsys.readouterr()
    res = run_sft(model, tok, rows, cfg, tmp_path / "run", seed=3, progress=False)
    assert "skipping step_000000004" in capsys.readouterr().out
    assert res["resumed_from_step"] == 2
    w_ref = load_file(tmp_path / "ref" / "model" / "model.safetensors")
    w_res = load_file(tmp_path / "run" / "model" / "model.safetensors")
    assert all(torch.equal(w_ref[k], w_res[k]) for k in w_ref)
