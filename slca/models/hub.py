"""The `hub` backbone kind: a pretrained checkpoint named by a hub id or a local directory.

Nothing is built or downloaded: loaders pass `local_files_only=True`, so a checkpoint that is not on
this machine fails where it is loaded, naming it.
"""

from __future__ import annotations

from slca.config.groups.backbone import HubBackbone
from slca.models.backbones import BackboneKind, SftRows, register_kind


def hub_model_dir(cfg: HubBackbone, sft_rows: SftRows) -> str:
    return cfg.hub_id


register_kind(BackboneKind("hub", model_dir=hub_model_dir, template_family=lambda cfg: cfg.chat_template))
