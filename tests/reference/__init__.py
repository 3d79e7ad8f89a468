"""Pure-Python reference implementation of MATCH_RECOGNIZE, used as a test oracle.

- ``rpr``: the reference matcher (standard semantics, WITHIN, SKIP TILL NEXT MATCH).
- ``random_cases``: seeded random cases that render both Spark SQL and the equivalent
  reference call, for differential testing against the real implementation.

Nothing here is fast; everything here is meant to be obviously correct.
"""
