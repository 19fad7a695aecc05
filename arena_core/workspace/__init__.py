"""Workspaces for criterion checks: confined paths, git checkouts, and the command runners'
protocol."""
