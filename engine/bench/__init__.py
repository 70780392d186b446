"""`python -m engine.bench`: the engine benchmark (issue 4).

Workloads (workloads.py): single, chat, agent, long-prompt, seeded random token-id prompts.
Our engine is driven by runner.py; baselines (transformers, llama.cpp) by baselines.py, in the
same process on the same prompts and weights; suite.py runs them all, metrics.py summarises
per-request timings, report.py prints the table.
"""
