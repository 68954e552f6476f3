"""Small statistics helpers used by the weekly sales report."""


def mean(values):
    """The arithmetic mean of a non-empty list of numbers."""
    if not values:
        raise ValueError("mean of an empty list")
    return sum(values) / len(values)


def median(values):
    """The middle value of a non-empty list of numbers (the mean of the two middle
    values when the list has an even length)."""
    if not values:
        raise ValueError("median of an empty list")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2 == 1:
        return ordered[middle]
    return (ordered[middle] + ordered[middle + 1]) / 2


def spread(values):
    """The distance between the smallest and the largest value."""
    if not values:
        raise ValueError("spread of an empty list")
    return max(values) - min(values)
