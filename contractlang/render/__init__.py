"""IR → contract prose in the settings' wordings (`contractlang render`)."""

from contractlang.render.prose import relabel, render

__all__ = ["relabel", "render"]
