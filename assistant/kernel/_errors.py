"""The project's exceptions. Each message says what to do about it."""

__all__ = [
    "AssistantError",
    "JavaNotFoundError",
    "IndexNotFoundError",
    "ModelNotFoundError",
    "InvalidInputError",
    "DataFormatError",
    "ConfigError",
    "IndexDamagedError",
    "IndexChangedError",
    "DependencyError",
]


class AssistantError(Exception):
    """Base class: everything the UI edge catches and shows as a message."""


class JavaNotFoundError(AssistantError):
    """No Java >= 21 runtime for pyserini/Anserini."""


class IndexNotFoundError(AssistantError):
    """The index directory is missing, empty or not a Lucene index."""


class ModelNotFoundError(AssistantError):
    """A model path or name could not be loaded."""


class InvalidInputError(AssistantError):
    """A user's message or upload that the assistant cannot take."""


class DataFormatError(AssistantError):
    """A data file that is not in the format it was read as."""


class ConfigError(AssistantError):
    """A setting (``CONVQA_*`` variable or flag) of the wrong type, out of its
    range, or unknown."""


class IndexDamagedError(IndexNotFoundError):
    """The index exists but Lucene finds it damaged (a checksum or a read fails)."""


class IndexChangedError(IndexNotFoundError):
    """The index was replaced (rebuilt) while it was opened or checked, more
    than once, or is not in place yet while a build of it runs (an open
    waits a moment for it first): nothing is wrong with it, the open is to
    be tried again once the build has finished. An
    :class:`IndexNotFoundError` as the index that cannot be served now, not
    a missing one: its advice is its own."""


class DependencyError(AssistantError):
    """An installed package lacks what the code relies on (a version other
    than the one it was tested with)."""
