"""Prefect tasks: thin wrappers, one per step of design.md's data flow, over plain functions.

Every task is declared with `cache_policy=NO_CACHE`: a payment step must run every time it is
called (the ledger, not a cache, makes a repeat harmless), and Prefect's default policy would
hash each task's inputs, which here include a whole batch DataFrame and a lookup callable.
"""
