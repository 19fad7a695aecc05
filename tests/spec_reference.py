"""The spec's scoring functions, transcribed from docs/spec (evaluation-metrics-spec.md) as the test oracle.

Kept as close to the spec's text as possible, dict-based, so that a conformance test compares
arena-core against the contract rather than against itself. Only what the spec leaves
undefined is filled in: ``check_criterion`` for the criterion types the spec names.
"""

import math
import statistics


def calculate_token_efficiency_score(submission, task_baseline):
    tokens_used = submission["total_tokens"]
    min_tokens = task_baseline["min_tokens"]
    max_tokens = task_baseline["max_tokens"]
    if tokens_used <= min_tokens:
        return 100.0
    elif tokens_used >= max_tokens:
        return 0.0
    else:
        efficiency_ratio = (max_tokens - tokens_used) / (max_tokens - min_tokens)
        return min(100.0, efficiency_ratio * 100.0)


def calculate_tool_call_efficiency_score(submission, task_baseline):
    tool_calls = submission["tool_calls"]
    min_calls = task_baseline["min_tool_calls"]
    max_calls = task_baseline["max_tool_calls"]
    if tool_calls <= min_calls:
        return 100.0
    elif tool_calls >= max_calls:
        return 0.0
    else:
        efficiency_ratio = (max_calls - tool_calls) / (max_calls - min_calls)
        return efficiency_ratio * 100.0


def calculate_iteration_efficiency_score(submission, task_baseline):
    iterations = submission.get("iterations", 1)
    baseline_iterations = task_baseline["median_iterations"]
    if iterations == 1:
        return 100.0
    elif iterations <= baseline_iterations:
        return max(50.0, 100.0 - (iterations - 1) * 15.0)
    else:
        return max(0.0, 50.0 - (iterations - baseline_iterations) * 10.0)


def calculate_efficiency_score(submission, task_baseline):
    token_score = calculate_token_efficiency_score(submission, task_baseline)
    tool_call_score = calculate_tool_call_efficiency_score(submission, task_baseline)
    iteration_score = calculate_iteration_efficiency_score(submission, task_baseline)
    return token_score * 0.5 + tool_call_score * 0.3 + iteration_score * 0.2


def calculate_speed_score(submission, task_baseline):
    execution_time = submission.get("execution_time", 0)
    if execution_time == 0:
        return 50.0
    min_time = task_baseline["min_execution_time"]
    max_time = task_baseline["max_execution_time"]
    if execution_time <= min_time:
        return 100.0
    elif execution_time >= max_time:
        return 0.0
    else:
        speed_ratio = (max_time - execution_time) / (max_time - min_time)
        return min(100.0, (speed_ratio**0.7) * 100.0)


def calculate_cost_score(submission, task_baseline):
    estimated_cost = submission.get("estimated_cost", 0.0)
    if estimated_cost == 0.0:
        return 50.0
    min_cost = task_baseline["min_cost"]
    max_cost = task_baseline["max_cost"]
    if estimated_cost <= min_cost:
        return 100.0
    elif estimated_cost >= max_cost:
        return 0.0
    else:
        cost_ratio = (max_cost - estimated_cost) / (max_cost - min_cost)
        return cost_ratio * 100.0


def check_criterion(submission, criterion):
    criterion_type = criterion.get("type")
    if criterion_type == "file_exists":
        return criterion["file_path"] in submission.get("files_created", [])
    elif criterion_type == "no_errors":
        return submission.get("success", True)
    raise AssertionError(f"the oracle only knows the spec's defined criteria, not {criterion_type!r}")


def calculate_correctness_score(submission, task):
    success_criteria = task.get("success_criteria", [])
    if not success_criteria:
        return 100.0
    passed_criteria = [check_criterion(submission, c) for c in success_criteria]
    pass_rate = sum(passed_criteria) / len(success_criteria)
    return pass_rate * 100.0


def calculate_overall_score(submission, task, task_baseline):
    efficiency_score = calculate_efficiency_score(submission, task_baseline)
    speed_score = calculate_speed_score(submission, task_baseline)
    cost_score = calculate_cost_score(submission, task_baseline)
    correctness_score = calculate_correctness_score(submission, task)
    weights = {"efficiency": 0.35, "speed": 0.25, "cost": 0.20, "correctness": 0.20}
    overall_score = (
        efficiency_score * weights["efficiency"]
        + speed_score * weights["speed"]
        + cost_score * weights["cost"]
        + correctness_score * weights["correctness"]
    )
    return {
        "overall_score": round(overall_score, 2),
        "efficiency_score": round(efficiency_score, 2),
        "speed_score": round(speed_score, 2),
        "cost_score": round(cost_score, 2),
        "correctness_score": round(correctness_score, 2),
        "breakdown": {
            "efficiency_weight": weights["efficiency"],
            "speed_weight": weights["speed"],
            "cost_weight": weights["cost"],
            "correctness_weight": weights["correctness"],
        },
    }


TASK_CATEGORY_WEIGHTS = {
    "frontend_development": {"efficiency": 0.30, "speed": 0.25, "cost": 0.15, "correctness": 0.30},
    "backend_development": {"efficiency": 0.35, "speed": 0.30, "cost": 0.20, "correctness": 0.15},
    "data_analysis": {"efficiency": 0.40, "speed": 0.20, "cost": 0.25, "correctness": 0.15},
    "debugging": {"efficiency": 0.25, "speed": 0.35, "cost": 0.15, "correctness": 0.25},
    "refactoring": {"efficiency": 0.45, "speed": 0.20, "cost": 0.20, "correctness": 0.15},
}


def apply_difficulty_adjustment(score, difficulty):
    adjustments = {"beginner": 1.0, "intermediate": 1.1, "advanced": 1.2}
    return min(100.0, score * adjustments.get(difficulty, 1.0))


def calculate_task_baseline(task_id, submissions):
    tokens = [s["total_tokens"] for s in submissions]
    tool_calls = [s["tool_calls"] for s in submissions]
    execution_times = [s.get("execution_time", 0) for s in submissions if s.get("execution_time", 0) > 0]
    costs = [s.get("estimated_cost", 0) for s in submissions if s.get("estimated_cost", 0) > 0]
    iterations = [s.get("iterations", 1) for s in submissions]
    return {
        "submission_count": len(submissions),
        "median_tokens": statistics.median(tokens),
        "min_tokens": min(tokens),
        "max_tokens": max(tokens),
        "q25_tokens": statistics.quantiles(tokens, n=4)[0],
        "q75_tokens": statistics.quantiles(tokens, n=4)[2],
        "median_tool_calls": statistics.median(tool_calls),
        "min_tool_calls": min(tool_calls),
        "max_tool_calls": max(tool_calls),
        "median_execution_time": statistics.median(execution_times) if execution_times else 300,
        "min_execution_time": min(execution_times) if execution_times else 60,
        "max_execution_time": max(execution_times) if execution_times else 1800,
        "median_cost": statistics.median(costs) if costs else 0.05,
        "min_cost": min(costs) if costs else 0.01,
        "max_cost": max(costs) if costs else 0.20,
        "median_iterations": statistics.median(iterations),
    }


def calculate_percentile(score, all_scores):
    if not all_scores:
        return 50.0
    sorted_scores = sorted(all_scores)
    position = sorted_scores.index(score)
    percentile = (position / len(sorted_scores)) * 100
    return round(percentile, 1)


def calculate_confidence_interval(scores, confidence_level=0.95):
    if len(scores) < 3:
        return (0, 100)
    mean = statistics.mean(scores)
    std_dev = statistics.stdev(scores)
    n = len(scores)
    t_value = 2.776 if n < 30 else 1.96
    margin_of_error = t_value * (std_dev / math.sqrt(n))
    return (max(0, mean - margin_of_error), min(100, mean + margin_of_error))
