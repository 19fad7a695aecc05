"""An example arena-core plugin, installed by the test suite as a real distribution.

It registers a criterion checker, ``has_tests`` (the submission created at least one test
file), and a metric, ``frugal_cost`` (like the spec's cost score, but an unmeasured cost
scores 0 instead of 50).
"""

from arena_core import hookimpl
from arena_plugins.metrics import linear_score


class HasTests:
    """Passes when one of the files the submission created is a test module."""

    type = "has_tests"

    def check(self, submission, criterion, task):
        return any(p.rsplit("/", 1)[-1].startswith("test_") for p in submission.files_created)


class FrugalCost:
    """Linear cost score between the baseline's min and max; no data, no credit."""

    name = "frugal_cost"
    requires = ()

    def score(self, submission, task, baseline):
        cost = submission.estimated_cost
        if not cost:
            return 0.0
        return linear_score(cost, baseline.min_cost, baseline.max_cost)


@hookimpl
def arena_register_criterion_checkers():
    return [HasTests()]


@hookimpl
def arena_register_metrics():
    return [FrugalCost()]
