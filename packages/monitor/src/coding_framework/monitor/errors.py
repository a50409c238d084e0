"""Exceptions of the monitor package; every one says what to do about it."""

from __future__ import annotations


class MonitorError(Exception):
    """Base class of every error this package raises on purpose."""


class SinkStartError(MonitorError):
    """A sink the user asked for explicitly (mode "on") could not start."""


class RunDirInUseError(MonitorError):
    """The run dir already holds a logged run and the config did not ask to resume it."""
