"""The one verl release slca's plugins are written against (its extension points change between
releases), and the check every entry into the verl backend makes first."""

from __future__ import annotations

from importlib import metadata

from slca.runcontext import RunError

VERL_VERSION = "0.9.1"


class VerlUnavailable(RunError):
    """verl is missing or is not the pinned release; `str()` is the whole one-line message."""


def installed_verl() -> str | None:
    """The installed verl's version, or None when verl is not installed."""
    try:
        return metadata.version("verl")
    except metadata.PackageNotFoundError:
        return None


def require_verl(found: str | None = None) -> None:
    """Raise VerlUnavailable (one line) unless verl 0.9.1 is installed; `found` overrides the lookup."""
    version = installed_verl() if found is None else found
    if version is None:
        raise VerlUnavailable(f"the verl backend needs verl=={VERL_VERSION}; verl is not installed (pip install 'slca[verl]')")
    if version != VERL_VERSION:
        raise VerlUnavailable(f"the verl backend needs verl=={VERL_VERSION}; found verl {version} (pip install 'verl[verl-core]=={VERL_VERSION}')")
