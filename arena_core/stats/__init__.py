"""Statistics over evaluations: rankings and percentiles, rank correlations, outliers and
validation, bias, leaderboards and comparisons of two scorings."""
