"""Which coding-framework distributions are installed, and at what version.

Versions live only in each package's pyproject.toml; installed metadata is how they reach us.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata

DIST_PREFIX = "coding-framework"


@dataclass(frozen=True)
class InstalledPackage:
    distribution: str
    version: str


def installed_packages() -> list[InstalledPackage]:
    """Every installed distribution of this project (the umbrella first, then by name)."""
    found: dict[str, InstalledPackage] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name and name.lower().replace("_", "-").startswith(DIST_PREFIX):
            key = name.lower().replace("_", "-")
            found[key] = InstalledPackage(distribution=key, version=dist.version)
    return sorted(found.values(), key=lambda p: (p.distribution != DIST_PREFIX, p.distribution))
