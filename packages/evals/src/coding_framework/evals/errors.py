"""Errors a user can fix: each message is one line that says what is wrong and where.

The CLI prints `str(error)` and exits non-zero, so messages name the file, the line and the values.
"""

from __future__ import annotations


class EvalError(Exception):
    """Base of every error this package raises about its inputs."""


class InputFileError(EvalError):
    """A problem or sample file that cannot be read, or whose content is malformed."""


class OutputFileError(EvalError):
    """A results, summary or report path that cannot be written, checked before any sample runs."""


class DatasetNotFoundError(EvalError):
    """A benchmark's data file is missing: the message names the expected path and how to get it."""


class UnknownTaskError(EvalError):
    """Samples refer to task ids the problem set does not contain."""


class UnknownBenchmarkError(EvalError):
    """A benchmark name that is not in the registry; the message lists the valid names."""


class GenerationError(EvalError):
    """Samples could not be generated: a backend that cannot start, or a request that keeps failing.

    Samples finished before the error are already in the samples file; rerunning resumes from them.
    """


class ModelNotFoundError(GenerationError):
    """A local model directory that is missing or lacks the files a Hugging Face model needs."""
