"""A name → object registry filled by a decorator that refuses duplicate names (house rule)."""

from __future__ import annotations

from typing import Callable, Generic, Iterator, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    """Plug-point registry: `@reg.register("name")` adds an entry, `reg.get("name")` returns it.

    Reads like a read-only mapping (`in`, `reg[name]`, `len`, sorted iteration, `items()`), so call
    sites that used a plain dict keep working; only `register` writes.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator adding `obj` under `name`; a second registration of a name raises ValueError."""

        def deco(obj: T) -> T:
            if name in self._entries:
                raise ValueError(f"{self.kind} {name!r} is already registered ({self._entries[name]!r})")
            self._entries[name] = obj
            return obj

        return deco

    def get(self, name: str) -> T:
        """The entry under `name` (KeyError listing the known names)."""
        try:
            return self._entries[name]
        except KeyError:
            raise KeyError(f"unknown {self.kind} {name!r}; known: {sorted(self._entries)}") from None

    __getitem__ = get

    def names(self) -> list[str]:
        return sorted(self._entries)

    def items(self) -> list[tuple[str, T]]:
        return sorted(self._entries.items(), key=lambda kv: kv[0])

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {sorted(self._entries)})"
