"""YAML read safely and within bounds: PyYAML's safe loader (no objects built from tags), refusing
a document whose aliases expand past :data:`MAX_NODES` nodes before anything is built. A few lines
of nested aliases expand to billions of nodes (a "billion laughs"); Aider's leaderboards, Inspect's
model-cost files and price tables use none.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["MAX_NODES", "load_yaml"]

#: Nodes a document may expand to, aliases followed.
MAX_NODES = 1_000_000


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a document whose aliases expand past :data:`MAX_NODES`
    nodes (counted on the composed graph, each shared node once, before anything is built)."""

    def compose_document(self) -> Any:
        node = super().compose_document()
        sizes: dict[int, int] = {}

        def expanded(item: Any) -> int:
            if id(item) not in sizes:
                sizes[id(item)] = 1  # a cycle counts once
                children = item.value if isinstance(item.value, list) else []
                parts = [p for pair in children for p in (pair if isinstance(pair, tuple) else (pair,))]
                sizes[id(item)] = min(MAX_NODES + 1, 1 + sum(expanded(p) for p in parts))
            return sizes[id(item)]

        if node is not None and expanded(node) > MAX_NODES:
            raise yaml.YAMLError(f"its aliases expand to more than {MAX_NODES:,} nodes (an alias bomb?)")
        return node


def load_yaml(text: str | bytes) -> Any:
    """The document in ``text``.

    :raises yaml.YAMLError: it is not YAML, or its aliases expand past :data:`MAX_NODES` nodes.
    """
    return yaml.load(text, Loader=_BoundedLoader)  # a safe loader, bounded
