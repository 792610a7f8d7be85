"""Game vocabularies: the names, weeks, units and limits a contract is checked against.

ContractSim facts follow ContractSim paper, App. A.1–A.2, Sec. 3; CT-Bench facts follow CT-Bench paper, App. E, Sec. 2.
"""

from __future__ import annotations

import json
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict

WEEKS = tuple(range(1, 12))
PAYMENT_WEEKS = (1, 3, 5, 7, 9, 11)
PRODUCTION_WEEKS = (2, 4, 6, 8, 10)
SUBSTITUTION_WEIGHTS = (4, 2, 1)
MAX_DEFICIT_RANGE = (0, 2)
BOARD_SIZE = 4
POINTS_RANGE = (0, 20)
COLOURS = ("red", "blue", "green")
CTBENCH_PARTIES = ("red", "blue")
BoardSet = Literal["ours", "paper"]  # our seeded 80-board sample, or the CT-Bench authors' 80 grids ([CT-31])
BOARD_SETS: tuple[BoardSet, ...] = ("ours", "paper")
RuleSet = Literal["authors", "paper"]  # how Prog-Trading entries are enforced ([CT-23], [CT-24], [CT-24a])
RULE_SETS: tuple[RuleSet, ...] = ("authors", "paper")


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    @classmethod
    def from_json_value(cls, value: object) -> Self:
        """The model from a parsed JSON value, its types taken as JSON has them: a string is never read as a
        number, nor `true` as 1, nor 42.0 as the integer 42 (what a lax read would silently do to a record)."""
        return cls.model_validate_json(json.dumps(value), strict=True)


class Setting(Frozen):
    """One ContractSim setting: the paper's relabelling of the same game with a money multiplier."""

    key: str
    game_id: str
    title: str
    products: tuple[str, str, str]
    product_titles: tuple[str, str, str]
    product_nouns: tuple[tuple[str, str], tuple[str, str], tuple[str, str]]  # (one, many) of each, for counts
    inputs: tuple[str, str, str]
    input_titles: tuple[str, str, str]
    customer_title: str
    supplier_title: str
    multiplier: int
    granularity: int

    def product_count(self, product: int, qty: int) -> str:
        """`1 Margherita Pizza`, `2 Margherita Pizzas`: a quantity with the product's noun in English."""
        one, many = self.product_nouns[product]
        return f"{qty} {one if qty == 1 else many}"

    def product_index(self, name: str) -> int | None:
        try:
            return self.products.index(name)
        except ValueError:
            return None


SETTINGS: dict[str, Setting] = {
    s.key: s
    for s in (
        Setting(
            key="catering",
            game_id="contractsim.catering",
            title="Catering",
            products=("pizza", "pasta", "soup"),
            product_titles=("Margherita Pizza", "Pesto Pasta", "Tomato Soup"),
            product_nouns=(
                ("Margherita Pizza", "Margherita Pizzas"),
                ("Pesto Pasta", "Pesto Pastas"),
                ("Tomato Soup", "Tomato Soups"),
            ),
            inputs=("mozzarella", "basil", "tomato"),
            input_titles=("Mozzarella", "Basil", "Tomato"),
            customer_title="Customer",
            supplier_title="Caterer",
            multiplier=1,
            granularity=1,
        ),
        Setting(
            key="hotel",
            game_id="contractsim.hotel",
            title="Hotel Cleaning",
            products=("conference_room", "king_room", "single_room"),
            product_titles=(
                "Conference Room Cleaning",
                "King-Sized Room Cleaning",
                "Single Room Cleaning",
            ),
            product_nouns=(
                ("Conference Room Cleaning", "Conference Room Cleanings"),
                ("King-Sized Room Cleaning", "King-Sized Room Cleanings"),
                ("Single Room Cleaning", "Single Room Cleanings"),
            ),
            inputs=("detergent", "disinfectant", "wet_wipes"),
            input_titles=("Detergent", "Disinfectant", "Wet-wipes"),
            customer_title="Hotel owner",
            supplier_title="Cleaning provider",
            multiplier=100,
            granularity=100,
        ),
        Setting(
            key="ai-hosting",
            game_id="contractsim.ai-hosting",
            title="AI Model Hosting",
            products=("fine_tuning", "model_hosting", "inference"),
            product_titles=("Fine-tuning", "Model-hosting", "Inference"),
            # "2 Fine-tunings" is not English: the AI setting counts jobs
            product_nouns=(
                ("Fine-tuning job", "Fine-tuning jobs"),
                ("Model-hosting job", "Model-hosting jobs"),
                ("Inference job", "Inference jobs"),
            ),
            inputs=("cpu", "memory", "gpu"),
            input_titles=("CPU", "Memory", "GPU"),
            customer_title="AI startup founder",
            supplier_title="AI service provider",
            multiplier=1000,
            granularity=1000,
        ),
    )
}

SETTING_BY_GAME_ID = {s.game_id: s for s in SETTINGS.values()}
CTBENCH_GAME_ID = "ctbench"
# `game ctbench.paper`: the contract's tiles refer to a board of that set (plain `game ctbench` names none)
BOARD_SET_BY_GAME_ID: dict[str, BoardSet] = {f"{CTBENCH_GAME_ID}.{s}": s for s in BOARD_SETS}
GAME_IDS = (*SETTING_BY_GAME_ID, CTBENCH_GAME_ID, *BOARD_SET_BY_GAME_ID)
CONTRACTSIM_ROLES = ("customer", "supplier")
