"""The reservation demo's load test (bench/demo_load.py): services to start (services),
scenarios (scenarios: the seed's paced load, the closed-loop capacity, stampedes, bookings,
bulk creation and counting) and the Markdown report beside the seed's numbers (report)."""
