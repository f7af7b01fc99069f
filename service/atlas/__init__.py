"""The winnability atlas: every game's odds from a batch of solved deals.

:mod:`.batch` solves deals over a range with a fixed budget in positions (resumable, on
every core, or one block per Kubernetes Indexed Job index) and merges the results;
:mod:`.table` turns them into each game's share of winnable deals with a 95% interval,
the asset the API serves. The command line is ``python -m service.atlas``.
"""
