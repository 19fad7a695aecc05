"""Reports for people: a comparison of two scorings as terminal text and self-contained HTML."""
