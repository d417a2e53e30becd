"""``python -m burstlab`` is the ``burstlab`` command."""

from burstlab.cli import main

main()
