"""07 · The gateway's dependency graph, as data for the drawing (:func:`.figures.plot_graph`).

The simulation does not read it: :func:`.model.simulate` wires the same dependencies in code.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..validate import check_choice


@dataclass(frozen=True)
class Node:
    """One component: ``name`` (key), ``label`` (as drawn), ``xy`` (drawing position)."""

    name: str
    label: str
    xy: tuple[float, float]


@dataclass(frozen=True)
class Edge:
    """A dependency: ``kind`` is ``call`` (synchronous), ``async`` (queued) or ``fallback``
    (taken only when the target of the normal path is unavailable)."""

    src: str
    dst: str
    label: str = ""
    kind: str = "call"


@dataclass(frozen=True)
class Graph:
    """A small dependency graph: nodes and edges, no library needed."""

    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]

    def __post_init__(self):
        names = [n.name for n in self.nodes]
        if len(set(names)) != len(names):
            raise ValueError(f"nodes must have distinct names, got {names}")
        for e in self.edges:
            for end in (e.src, e.dst):
                if end not in names:
                    raise ValueError(f"edge endpoint must be one of {names}, got {end!r}")
            check_choice("kind", e.kind, ("call", "async", "fallback"))

    def node(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise ValueError(f"name must be one of {[n.name for n in self.nodes]}, got {name!r}")

    def successors(self, name: str, kinds=("call", "async", "fallback")) -> list[str]:
        self.node(name)
        return [e.dst for e in self.edges if e.src == name and e.kind in kinds]


GATEWAY_GRAPH = Graph(
    nodes=(
        Node("clients", "clients\n(new release)", (0.9, 2.0)),
        Node("access", "access layer\ndefence checks", (3.5, 2.0)),
        Node("monitoring", "monitoring\nperf + errors", (3.5, 3.5)),
        Node("logs", "call logs\nsender threads", (3.5, 0.45)),
        Node("jimdb", "jimdb\nhot shard", (6.3, 3.5)),
        Node("jimdb_mon", "jimdb\nmonitoring cluster", (9.1, 3.5)),
        Node("app", "app layer", (6.3, 2.0)),
        Node("mysql", "mysql\ngateway db", (9.1, 2.0)),
        Node("jmq", "jmq", (6.3, 0.45)),
        Node("es", "es\nlog store", (9.1, 0.45)),
    ),
    edges=(
        Edge("clients", "access", "poll every 5 s"),
        Edge("access", "jimdb", "token, pin"),
        Edge("access", "monitoring", ""),
        Edge("monitoring", "jimdb", "writes"),
        Edge("monitoring", "jimdb_mon", "writes (split)"),
        Edge("access", "app", "dispatch"),
        Edge("app", "mysql", "sql"),
        Edge("access", "mysql", "fallback when jimdb is unavailable", "fallback"),
        Edge("access", "logs", ""),
        Edge("logs", "jmq", "", "async"),
        Edge("jmq", "es", "", "async"),
    ),
)
