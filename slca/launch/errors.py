"""The launch layer's one error (a leaf module: the launchers and the code snapshot both raise it)."""


class SweepError(RuntimeError):
    """A sweep that cannot be planned, submitted or read; `str()` is the one line the user sees."""
