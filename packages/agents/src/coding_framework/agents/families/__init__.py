"""Problem templates by difficulty level; `FAMILIES` maps each family's name to it."""

from __future__ import annotations

from coding_framework.agents.families import level1, level2, level3
from coding_framework.agents.families.base import Family, Task

FAMILIES: dict[str, Family] = {f.name: f for f in (*level1.FAMILIES, *level2.FAMILIES, *level3.FAMILIES)}
LEVELS: tuple[int, ...] = tuple(sorted({f.level for f in FAMILIES.values()}))


def families_at(level: int) -> tuple[Family, ...]:
    """The families of one level, in a fixed order; an unknown level raises with the valid ones."""
    found = tuple(f for f in FAMILIES.values() if f.level == level)
    if not found:
        raise ValueError(f"no problem families at level {level!r}; levels are {LEVELS}")
    return found


__all__ = ["FAMILIES", "LEVELS", "Family", "Task", "families_at"]
