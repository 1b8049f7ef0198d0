"""The LLM verdict step: a model reads each claim's page text, code re-checks the answer (pure core, no Dagster).

Modules: model (records), items (JudgeItem from a claim, its page and its prior), prompt, providers
(anthropic, openai-compatible, none; make_provider), runner (judge_items / run_judge), cache (SQLite verdict
cache), cost (token estimate and prices), scripted_server (a local HTTP stand-in for both wire formats, for
tests, the demo and the benchmark), checks/report/corrections/recount (the code checks and what ships).
Nothing here imports an SDK until a provider is made (anthropic's import alone takes seconds).
"""
