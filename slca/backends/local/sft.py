"""Local supervised fine-tuning on ShareGPT + hermes conversations, loss on assistant tokens only.

Pipeline: row → messages (system text re-rendered with the template's tools block, every other turn
verbatim) → text + assistant character spans (template generation tags) → token ids + label mask
(tokenizer offsets) → length-bucketed, padded micro-batches → AdamW, warm-up + cosine, gradient
clipping → checkpoints under `out_dir/checkpoints`, final model under `out_dir/model`.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from slca.backends.local.checkpoint import capture_rng_states, load_latest_checkpoint, restore, save_checkpoint
from slca.config.groups.train import SftConfig
from slca.fileio import remove_stale, temp_prefix
from slca.models.corpus import render_row

# Rows per length bucket are sorted within windows of this many batches before batching.
_BUCKET_WINDOW = 32


@dataclass
class EncodedSet:
    """Token ids and assistant-label masks per kept row, plus the accounting of rows in/out."""

    ids: list[Any] = field(default_factory=list)  # np.int64 arrays
    labels: list[Any] = field(default_factory=list)  # np.bool_ arrays: token is an assistant token
    source_index: list[int] = field(default_factory=list)
    rejected: list[tuple[int, str]] = field(default_factory=list)  # (row index, "field: reason")
    truncated: int = 0
    rows_in: int = 0

    def __len__(self) -> int:
        return len(self.ids)


def encode_rows(
    rows: Sequence[Any], tokenizer: Any, *, max_length: int, template: str | None = None, **template_vars: Any
) -> EncodedSet:
    """Render and tokenize rows; label mask = tokens whose first character lies in an assistant span.

    Rows longer than max_length are cut (counted in `truncated`); rows that fail to parse or keep
    no assistant token are rejected with their index and reason (rows_in = kept + rejected).
    """
    import numpy as np

    template = template or tokenizer.chat_template
    out = EncodedSet(rows_in=len(rows))
    texts, spans, idx = [], [], []
    for i, row in enumerate(rows):
        try:
            t, s = render_row(row, template, **template_vars)
        except ValueError as exc:
            out.rejected.append((i, str(exc)))
            continue
        texts.append(t)
        spans.append(s)
        idx.append(i)
    if not texts:
        return out
    # verbose=False: a row over max_length is cut and counted below; transformers' "longer than the model" warning is noise.
    enc = tokenizer(texts, add_special_tokens=False, return_offsets_mapping=True, return_attention_mask=False, verbose=False)
    for i, text, sp, ids, offs in zip(idx, texts, spans, enc["input_ids"], enc["offset_mapping"]):
        in_span = np.zeros(len(text) + 1, dtype=bool)
        for s, e in sp:
            in_span[s:e] = True
        ids_arr = np.asarray(ids, dtype=np.int64)
        starts = np.asarray(offs, dtype=np.int64).reshape(-1, 2)[:, 0]
        lab = in_span[starts]
        if len(ids_arr) > max_length:
            ids_arr, lab = ids_arr[:max_length], lab[:max_length]
            out.truncated += 1
        # Position 0 is never predicted, so a label there does not count.
        if not lab[1:].any():
            out.rejected.append((i, "conversations: no assistant token within max_length"))
            continue
        out.ids.append(ids_arr)
        out.labels.append(lab)
        out.source_index.append(i)
    return out


def epoch_batches(lengths: Sequence[int], batch_size: int, seed: int, epoch: int) -> list[list[int]]:
    """Length-bucketed batches for one epoch, deterministic in (seed, epoch).

    Shuffle, sort by length inside windows of `_BUCKET_WINDOW` batches, cut into batches, shuffle the
    batch order; every row appears exactly once.
    """
    import numpy as np

    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(len(lengths))
    lens = np.asarray(lengths)
    window = batch_size * _BUCKET_WINDOW
    batches: list[list[int]] = []
    for w in range(0, len(order), window):
        chunk = order[w : w + window]
        chunk = chunk[np.argsort(lens[chunk], kind="stable")]
        batches.extend(chunk[b : b + batch_size].tolist() for b in range(0, len(chunk), batch_size))
    perm = rng.permutation(len(batches))
    return [batches[k] for k in perm]


def collate(ids: Sequence[Any], labels: Sequence[Any], pad_id: int):
    """Right-padded (input_ids, attention_mask, label_mask), each (B, T_max) tensors."""
    import torch

    t = max(len(x) for x in ids)
    b = len(ids)
    input_ids = torch.full((b, t), pad_id, dtype=torch.long)
    attn = torch.zeros((b, t), dtype=torch.long)
    lab = torch.zeros((b, t), dtype=torch.bool)
    for r, (x, m) in enumerate(zip(ids, labels)):
        n = len(x)
        input_ids[r, :n] = torch.from_numpy(x)
        attn[r, :n] = 1
        lab[r, :n] = torch.from_numpy(m)
    return input_ids, attn, lab


def masked_nll_sum(model: Any, input_ids, attention_mask, label_mask):
    """Sum of next-token NLL over positions whose *target* is a label token, and their count.

    input_ids, attention_mask, label_mask: (B, T). The LM head runs only on the (N, H) hidden
    states that predict a label, which skips the prompt and tool-response positions.
    """
    import torch.nn.functional as F

    hidden = model.base_model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    sel = label_mask[:, 1:]
    h = hidden[:, :-1][sel]
    targets = input_ids[:, 1:][sel]
    logits = model.get_output_embeddings()(h).float()
    return F.cross_entropy(logits, targets, reduction="sum"), int(sel.sum())


def lr_lambda_factory(total_steps: int, warmup_steps: int, scheduler: str) -> Callable[[int], float]:
    """Linear warm-up to 1 over `warmup_steps`, then cosine to 0 at `total_steps` (or constant)."""

    def factor(step: int) -> float:
        if step < warmup_steps:
            return (step + 1) / warmup_steps
        if scheduler == "constant":
            return 1.0
        progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
        return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))

    return factor


def _data_fingerprint(data: EncodedSet) -> str:
    import hashlib

    h = hashlib.sha256()
    for x, m in zip(data.ids, data.labels):
        h.update(x.tobytes())
        h.update(m.tobytes())
    return h.hexdigest()[:16]


def _save_final(model: Any, tokenizer: Any, target: Path) -> None:
    remove_stale(target)
    tmp = Path(tempfile.mkdtemp(prefix=temp_prefix(target), suffix=".tmp", dir=target.parent))
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        if target.exists():
            shutil.rmtree(target)
        os.rename(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def run_sft(
    model: Any,
    tokenizer: Any,
    rows: Iterable[Any],
    cfg: SftConfig,
    out_dir: str | os.PathLike,
    *,
    seed: int,
    device: Any = "cpu",
    progress: bool = True,
    on_step: Callable[[dict[str, Any]], None] | None = None,
    num_threads: int | None = None,
    template_vars: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Fine-tune `model` in place on ShareGPT rows; resume from `out_dir/checkpoints` when present.

    `on_step` receives each optimiser step's metrics (step, epoch, loss, lr, grad_norm, tokens,
    label_tokens, tokens_per_s, step_s) after that step's checkpoint, if any, is written.
    Returns a summary (steps, losses, wall time, throughput, row accounting, model_dir).
    """
    import numpy as np
    import torch

    if num_threads:
        torch.set_num_threads(num_threads)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ckpt_dir = out / "checkpoints"
    rows = list(rows)
    if cfg.max_rows is not None:
        rows = rows[: cfg.max_rows]
    # Never feed the model more positions than it was built for.
    max_length = min(cfg.max_length, getattr(model.config, "max_position_embeddings", cfg.max_length))
    data = encode_rows(rows, tokenizer, max_length=max_length, **(template_vars or {}))
    if not len(data):
        raise ValueError(f"no usable SFT rows ({len(data.rejected)} rejected; first: {data.rejected[:3]})")
    lengths = [len(x) for x in data.ids]
    steps_per_epoch = math.ceil(len(data) / cfg.batch_size)
    total_steps = max(1, round(cfg.epochs * steps_per_epoch))
    warmup_steps = math.ceil(cfg.warmup_ratio * total_steps)
    # What must match for a resume to continue the same run (checkpoint cadence may change).
    fingerprint = _data_fingerprint(data) + ":" + cfg.model_dump_json(exclude={"save_every_steps", "keep_checkpoints"}) + f":{seed}"
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    model.to(device)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda_factory(total_steps, warmup_steps, cfg.scheduler))

    torch.manual_seed(seed)
    start_step = 0
    ckpt = load_latest_checkpoint(ckpt_dir)
    if ckpt is not None:
        if ckpt.extra_state.get("run_fingerprint") != fingerprint or ckpt.extra_state.get("total_steps") != total_steps:
            raise ValueError(f"checkpoint {ckpt.path} was written for other data or settings; refusing to resume")
        restore(ckpt, model=model, optimizer=optimizer, scheduler=sched)
        start_step = ckpt.step

    save_every = cfg.save_every_steps
    losses: list[float] = []
    t_start = time.perf_counter()
    tokens_total = 0
    bar = _progress(progress, total_steps, start_step)
    order_epoch, order = -1, []
    step = start_step
    try:
        while step < total_steps:
            epoch, pos = divmod(step, steps_per_epoch)
            if epoch != order_epoch:
                order, order_epoch = epoch_batches(lengths, cfg.batch_size, seed, epoch), epoch
            batch = order[pos]
            t0 = time.perf_counter()
            n_label = sum(int(data.labels[i][1:].sum()) for i in batch)
            n_tok = sum(lengths[i] for i in batch)
            optimizer.zero_grad(set_to_none=True)
            loss_sum = 0.0
            for m0 in range(0, len(batch), cfg.micro_batch_size):
                mb = batch[m0 : m0 + cfg.micro_batch_size]
                ids, attn, lab = collate([data.ids[i] for i in mb], [data.labels[i] for i in mb], pad_id)
                nll, _ = masked_nll_sum(model, ids.to(device), attn.to(device), lab.to(device))
                (nll / n_label).backward()
                loss_sum += float(nll.detach())
            grad_norm = float(torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip))
            lr = optimizer.param_groups[0]["lr"]
            optimizer.step()
            sched.step()
            step += 1
            dt = time.perf_counter() - t0
            tokens_total += n_tok
            loss = loss_sum / n_label
            losses.append(loss)
            end_of_epoch = step % steps_per_epoch == 0
            if step == total_steps or end_of_epoch or (save_every and step % save_every == 0):
                save_checkpoint(
                    ckpt_dir,
                    model=model,
                    optimizer=optimizer,
                    scheduler=sched,
                    rng_states=capture_rng_states(),
                    extra_state={"run_fingerprint": fingerprint, "total_steps": total_steps, "seed": seed},
                    step=step,
                    keep_last=cfg.keep_checkpoints,
                )
            metrics = {
                "step": step,
                "epoch": step / steps_per_epoch,
                "loss": loss,
                "lr": lr,
                "grad_norm": grad_norm,
                "tokens": n_tok,
                "label_tokens": n_label,
                "tokens_per_s": n_tok / dt if dt > 0 else 0.0,
                "step_s": dt,
            }
            if bar is not None:
                bar[0].update(bar[1], advance=1, description=f"sft loss {loss:.3f}")
            if on_step is not None:
                on_step(metrics)
    finally:
        if bar is not None:
            bar[0].stop()
    wall = time.perf_counter() - t_start
    model_dir = out / "model"
    _save_final(model, tokenizer, model_dir)
    per_epoch = [float(np.mean(losses[k : k + steps_per_epoch])) for k in range(0, len(losses), steps_per_epoch)]
    return {
        "steps": total_steps,
        "steps_run": len(losses),
        "resumed_from_step": start_step,
        "epochs": cfg.epochs,
        "first_loss": losses[0] if losses else None,
        "final_loss": losses[-1] if losses else None,
        "epoch_mean_loss": per_epoch,
        "wall_s": wall,
        "tokens_per_s": tokens_total / wall if wall > 0 else 0.0,
        "rows_in": data.rows_in,
        "rows_used": len(data),
        "rows_rejected": len(data.rejected),
        "rejected": data.rejected[:20],
        "rows_truncated": data.truncated,
        "mean_tokens_per_row": float(np.mean(lengths)),
        "model_dir": str(model_dir),
    }


def _progress(enabled: bool, total: int, done: int):
    if not enabled:
        return None
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn

    from slca.terminal import progress_bar

    p = progress_bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), transient=False)
    task = p.add_task("sft", total=total, completed=done)
    p.start()
    return p, task
