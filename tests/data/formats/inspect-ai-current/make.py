"""Regenerate this folder's logs with Inspect itself (run in a throwaway virtual environment with
``inspect-ai`` installed, never in arena-core's):

    python -m venv /tmp/inspect && /tmp/inspect/bin/pip install inspect-ai==0.3.285
    /tmp/inspect/bin/python tests/data/formats/inspect-ai-current/make.py

Inspect's mock model (``mockllm/model``) answers from a function given here, so the runs are
real evaluations (Inspect's solver loop, scorers, reducers and log writer) without a model
provider. Each answer reports usage as Anthropic's API does (input tokens without the cached
ones; the total adds them), at a fixed price.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.log import ProvenanceData, convert_eval_logs, invalidate_samples, read_eval_log, write_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, includes, mean, scorer
from inspect_ai.solver import TaskState, generate

HERE = Path(__file__).parent
SAMPLES = [
    Sample(id="capital", input="What is the capital of France?", target="Paris"),
    Sample(id="product", input="What is 6 times 7?", target="42"),
]
#: Per answer: 200 fresh input tokens, 1,000 read from the cache, 100 written to it, 40 out.
USAGE = {"input_tokens": 200, "input_tokens_cache_read": 1000, "input_tokens_cache_write": 100, "output_tokens": 40}


def answer(input, tools, tool_choice, config) -> ModelOutput:  # noqa: ANN001 (Inspect's signature)
    """Paris for the capital; a wrong product on every attempt."""
    question = input[-1].text
    output = ModelOutput.from_content(model="mockllm/model", content="Paris" if "France" in question else "41")
    output.usage = ModelUsage(total_tokens=sum(USAGE.values()), total_cost=0.0021, **USAGE)
    return output


@scorer(metrics={"*": [mean()]})
def checks():
    """A scorer whose value is a dict (several checks of one sample), as current scorers write."""

    async def score(state: TaskState, target: Target) -> Score:
        text = state.output.completion
        return Score(value={"answered": CORRECT if text else INCORRECT, "exact": CORRECT if text == target.text else INCORRECT})

    return score


@task
def epochs_task():
    """Two samples, three epochs each, scored by `includes`: repeated attempts."""
    return Task(dataset=SAMPLES, solver=generate(), scorer=includes(), epochs=3)


@task
def dict_score_task():
    """The same samples scored by a scorer with a dict value."""
    return Task(dataset=SAMPLES, solver=generate(), scorer=checks())


def main() -> None:
    model = get_model("mockllm/model", custom_outputs=answer)
    for name, made in (("epochs", epochs_task()), ("dict-score", dict_score_task())):
        work = HERE / f".{name}"
        shutil.rmtree(work, ignore_errors=True)
        [log] = eval(made, model=model, log_dir=str(work), log_format="eval", display="none")
        if name == "epochs":  # the third attempt at the product is invalidated after the run
            log = read_eval_log(log.location)
            last = next(s for s in log.samples if s.id == "product" and s.epoch == 3)
            log = invalidate_samples(log, [last.uuid], ProvenanceData(author="arena-core", reason="scorer was wrong"))
            write_eval_log(log, log.location)
        shutil.copy(log.location, HERE / f"{name}.eval")
        shutil.rmtree(work)
    # The JSON twin of epochs.eval, as `inspect log convert --to json` writes it: the same log twice.
    shutil.rmtree(HERE / "converted", ignore_errors=True)
    convert_eval_logs(str(HERE / "epochs.eval"), "json", str(HERE / "converted"))


if __name__ == "__main__":
    main()
