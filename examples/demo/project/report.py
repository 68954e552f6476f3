"""Prints a summary of the week's sales, one number per day."""

import sys

from stats import mean, median, spread


def summary(sales):
    return (
        f"days: {len(sales)}\n"
        f"mean: {mean(sales):.2f}\n"
        f"median: {median(sales):.2f}\n"
        f"spread: {spread(sales):.2f}"
    )


if __name__ == "__main__":
    print(summary([float(x) for x in sys.argv[1:]] or [120, 95, 130, 80, 150, 110]))
