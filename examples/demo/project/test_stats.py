"""Run with: python3 -m unittest -v"""

import unittest

from stats import mean, median, spread


class StatsTest(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(mean([1, 2, 3, 4]), 2.5)

    def test_median_odd_length(self):
        self.assertEqual(median([5, 1, 3]), 3)

    def test_median_even_length(self):
        self.assertEqual(median([4, 1, 3, 2]), 2.5)
        self.assertEqual(median([10, 20]), 15)

    def test_spread(self):
        self.assertEqual(spread([3, 9, 4]), 6)

    def test_empty_lists_are_refused(self):
        for f in (mean, median, spread):
            with self.assertRaises(ValueError):
                f([])


if __name__ == "__main__":
    unittest.main()
