"""Plugins: the pluggy manager that loads built-ins and entry points, and the registry that
collects every component they register, once, with its owner."""
