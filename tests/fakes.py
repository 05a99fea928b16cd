"""Stand-ins for what a dream reads from outside the store, for tests that decide without it."""

from collections.abc import Collection
from datetime import datetime

from auto_dream.judge.staleness import Evidence


class DictRepository:
    """judge.staleness.Repository from two dicts: each file path and symbol name the repository
    has now (True) or its history proves gone (False); any other is unverifiable."""

    def __init__(self, files: dict[str, bool] | None = None, symbols: dict[str, bool] | None = None):
        self._files, self._symbols = files or {}, symbols or {}
        self.asked: list[tuple[str, frozenset[str]]] = []

    def files(self, paths: Collection[str]) -> Evidence:
        self.asked.append(("files", frozenset(paths)))
        return _evidence(self._files, paths)

    def symbols(self, names: Collection[str], written: Collection[datetime] = ()) -> Evidence:
        self.asked.append(("symbols", frozenset(names)))
        return _evidence(self._symbols, names)


def _evidence(known: dict[str, bool], asked: Collection[str]) -> Evidence:
    return Evidence(frozenset(a for a in asked if known.get(a) is True),
                    frozenset(a for a in asked if known.get(a) is False))
