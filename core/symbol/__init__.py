"""core.symbol: the symbolic graph mode.

- :mod:`.graph`: the graph IR (``Node``, ``Entry``, ``Graph``) and the reference
  interpreter ``evaluate``;
- :mod:`.trace`: recording Python code that calls operators into a graph;
"""
from .graph import TRAIN, Entry, Graph, Node, evaluate
from .trace import Tracer

__all__ = ["TRAIN", "Entry", "Graph", "Node", "Tracer", "evaluate"]
