"""The ``profet`` command line: one module per subcommand (``add_parser`` and ``run``), all
thin over the core's public calls.

The top layer: nothing in the package imports it.
"""
