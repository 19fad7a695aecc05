"""arena-core's built-in plugins, registered like any third-party plugin.

One module per component family; each ends with the ``@hookimpl`` that registers its
components. They are importable as ``arena_plugins.<module>``.
"""
