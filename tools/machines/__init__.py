"""The run that stands for other machines (``python -m tools machines``).

A claim's window must hold on readers' machines, not only on the one that built the
book. This step executes every notebook of both frameworks again under numerics other
than the build's (``environments``: CPU kernels capped at another instruction set, one
compute thread instead of two), with each claim cell's assertions recorded instead of
raised (``instrument``), and prints every claim's values per environment with the
margin its window leaves, the tightest first (``margins``). The results stay in
``_build/machines/`` for the execution report.
"""
