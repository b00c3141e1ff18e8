"""Unit tests of bench/benchkit/stats.py: python3 -m unittest discover -s bench/tests
(ctest runs them as bench_python_tests)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchkit import stats  # noqa: E402


class PercentileTest(unittest.TestCase):
    def test_empty_is_none(self):
        self.assertIsNone(stats.percentile([], 50))

    def test_single_value_is_every_percentile(self):
        for q in (1, 50, 95, 99, 100):
            self.assertEqual(stats.percentile([7.0], q), 7.0)

    def test_nearest_rank_of_one_to_hundred(self):
        values = list(range(1, 101))
        self.assertEqual(stats.percentile(values, 50), 50)
        self.assertEqual(stats.percentile(values, 95), 95)
        self.assertEqual(stats.percentile(values, 99), 99)
        self.assertEqual(stats.percentile(values, 100), 100)
        self.assertEqual(stats.percentile(values, 0.5), 1)

    def test_rank_rounds_up_never_interpolates(self):
        # 10 values: p95 is rank ceil(9.5) = 10, p50 rank 5; always a measured value.
        values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 1000]
        self.assertEqual(stats.percentile(values, 95), 1000)
        self.assertEqual(stats.percentile(values, 90), 9)
        self.assertEqual(stats.percentile(values, 50), 5)

    def test_p99_of_small_sample_is_its_maximum(self):
        self.assertEqual(stats.percentile([1, 2, 3], 99), 3)


class MedianTest(unittest.TestCase):
    def test_skips_missing(self):
        self.assertEqual(stats.median([None, 3, 1, None, 2]), 2)

    def test_even_count_averages(self):
        self.assertEqual(stats.median([1, 2, 3, 10]), 2.5)

    def test_nothing_is_none(self):
        self.assertIsNone(stats.median([]))
        self.assertIsNone(stats.median([None]))


class PairedRatioTest(unittest.TestCase):
    def test_median_of_per_round_ratios(self):
        a = [{"rps": 110}, {"rps": 90}, {"rps": 300}]
        b = [{"rps": 100}, {"rps": 100}, {"rps": 100}]
        # per round 1.1, 0.9, 3.0: the median, not the ratio of medians (100/100 = 1.0)
        self.assertAlmostEqual(stats.paired_ratio(a, b, "rps"), 1.1)

    def test_rounds_pair_by_index_and_extra_rounds_are_dropped(self):
        a = [{"ms": 2}, {"ms": 4}, {"ms": 100}]
        b = [{"ms": 1}, {"ms": 2}]
        self.assertAlmostEqual(stats.paired_ratio(a, b, "ms"), 2.0)

    def test_missing_or_zero_denominator_is_skipped(self):
        a = [{"ms": 5}, {"ms": None}, {"ms": 3}]
        b = [{"ms": 0}, {"ms": 1}, {"ms": 2}]
        self.assertAlmostEqual(stats.paired_ratio(a, b, "ms"), 1.5)

    def test_no_pair_is_none(self):
        self.assertIsNone(stats.paired_ratio([], [{"x": 1}], "x"))
        self.assertIsNone(stats.paired_ratio([{"x": 1}], [{"x": 0}], "x"))


class LatencySummaryTest(unittest.TestCase):
    def test_milliseconds_from_unsorted_seconds(self):
        s = stats.latency_summary([0.003, 0.001, 0.002, 0.004])
        self.assertAlmostEqual(s["p50_ms"], 2.0)
        self.assertAlmostEqual(s["p99_ms"], 4.0)
        self.assertAlmostEqual(s["max_ms"], 4.0)
        self.assertEqual(s["n"], 4)

    def test_empty(self):
        s = stats.latency_summary([])
        self.assertIsNone(s["p95_ms"])
        self.assertEqual(s["n"], 0)


if __name__ == "__main__":
    unittest.main()
