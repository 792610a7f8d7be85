"""What every facade result offers for analysis: its rows as plain dicts, and a pandas DataFrame of them."""

from __future__ import annotations

from abc import abstractmethod

from contractlang.vocab import Frozen


class Rows(Frozen):
    """A typed result whose `rows()` are one flat dict per line of its table."""

    @abstractmethod
    def rows(self) -> list[dict]:
        """One flat dict per line of the result's table; every result type says what a line is."""

    def to_pandas(self):
        """`rows()` as a pandas DataFrame (pandas is optional: `pip install pandas`)."""
        try:
            import pandas
        except ImportError:
            raise ImportError("to_pandas needs pandas: pip install pandas") from None
        return pandas.DataFrame(self.rows())


def flat(prefix: str, value) -> dict:
    """A nested model dump as one level of `a.b` keys (a summary's Stat fields become columns)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            out.update(flat(f"{prefix}.{key}" if prefix else key, item))
        return out
    return {prefix: value}
