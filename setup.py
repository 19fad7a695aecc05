"""Package discovery for arena-core.

Everything else lives in ``pyproject.toml``. This file exists because the built-in plugins sit in
``plugins/`` but ship as ``arena_plugins``: setuptools' ``packages.find`` in ``pyproject.toml``
cannot combine discovery with that renaming, and a hand-written package list silently leaves out
every subpackage nobody remembered to add (a wheel without ``arena_core.store`` once shipped that
way). Here both trees are discovered, so a new subpackage ships without anyone listing it.
"""

from setuptools import find_packages, setup

packages = find_packages(include=["arena_core", "arena_core.*"])
packages += ["arena_plugins"] + [f"arena_plugins.{name}" for name in find_packages("plugins")]

setup(packages=packages, package_dir={"arena_plugins": "plugins"})
