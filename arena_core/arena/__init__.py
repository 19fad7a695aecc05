"""The facade a host application embeds: :class:`Arena` (core.py), with its boards (boards.py)."""

from arena_core.arena.core import Arena, PluginInfo, worker_arena

__all__ = ["Arena", "PluginInfo", "worker_arena"]
