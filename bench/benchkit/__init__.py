"""Helpers shared by bench/run.py and bench/demo_load.py: child processes and their CPU time
(procs), a throw-away PostgreSQL server (postgres), an asyncio HTTP/1.1 client (http),
percentiles and paired ratios (stats), machine facts and number formatting (report).
Python 3 standard library only."""
