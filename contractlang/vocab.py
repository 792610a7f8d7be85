"""Game vocabularies: the names, weeks, units and limits a contract is checked against.

ContractSim facts follow spec/contractsim.md §2–§4; CT-Bench facts follow spec/ctbench.md §1–§3.
"""

from __future__ import annotations

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


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Setting(Frozen):
    """One ContractSim setting: the paper's relabelling of the same game with a money multiplier."""

    key: str
    game_id: str
    title: str
    products: tuple[str, str, str]
    product_titles: tuple[str, str, str]
    product_plurals: tuple[str, str, str]
    inputs: tuple[str, str, str]
    input_titles: tuple[str, str, str]
    customer_title: str
    supplier_title: str
    multiplier: int
    granularity: int

    def product_count(self, product: int, qty: int) -> str:
        """`1 Margherita Pizza`, `2 Margherita Pizzas`: a quantity with the product's name in English."""
        return f"{qty} {self.product_titles[product] if qty == 1 else self.product_plurals[product]}"

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
            product_plurals=("Margherita Pizzas", "Pesto Pastas", "Tomato Soups"),
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
            product_plurals=(
                "Conference Room Cleanings",
                "King-Sized Room Cleanings",
                "Single Room Cleanings",
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
            product_plurals=("Fine-tuning jobs", "Model-hosting jobs", "Inference jobs"),
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
GAME_IDS = (*SETTING_BY_GAME_ID, CTBENCH_GAME_ID)
CONTRACTSIM_ROLES = ("customer", "supplier")
