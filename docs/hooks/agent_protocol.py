"""MkDocs hook: the JSON schemas of the agent protocol's observations and actions, generated from the
pydantic models the games use, so the reference cannot drift from what an external agent is sent."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

PLACEHOLDER = "<!-- agent-protocol-schemas -->"


def _schemas() -> list[tuple[str, dict]]:
    from pydantic import Field, TypeAdapter

    from games.contractsim import game as contractsim
    from games.contractsim.negotiation import NegotiationObservation as ContractSimNegotiation
    from games.ctbench import game as ctbench
    from games.ctbench.agents import AnyAction
    from games.ctbench.negotiation import NegotiationObservation as CTBenchNegotiation

    def actions(union) -> dict:
        return TypeAdapter(Annotated[union, Field(discriminator="kind")]).json_schema()

    return [
        ("ContractSim Customer observation", contractsim.CustomerObservation.model_json_schema()),
        ("ContractSim Supplier observation", contractsim.SupplierObservation.model_json_schema()),
        ("ContractSim actions", actions(contractsim.Action)),
        ("ContractSim negotiation observation", ContractSimNegotiation.model_json_schema()),
        ("CT-Bench observation", ctbench.CTBenchObservation.model_json_schema()),
        ("CT-Bench negotiation observation", CTBenchNegotiation.model_json_schema()),
        ("CT-Bench actions (play and negotiation)", actions(AnyAction)),
    ]


def agent_protocol_schemas() -> str:
    out = []
    for title, schema in _schemas():
        out += [f"### {title}", "", '??? note "JSON schema"', "", "    ```json"]
        out += ["    " + line for line in json.dumps(schema, indent=2, ensure_ascii=False).splitlines()]
        out += ["    ```", ""]
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if PLACEHOLDER in markdown:
        return markdown.replace(PLACEHOLDER, agent_protocol_schemas())
    return markdown
