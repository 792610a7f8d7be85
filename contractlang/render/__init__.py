"""IR → contract prose in the settings' wordings (`contractlang render`)."""

from contractlang.render.prose import render

__all__ = ["render"]
