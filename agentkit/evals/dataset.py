"""Dataset: cases, and the evaluators that score every one of them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from agentkit.evals.case import Case
from agentkit.evals.dataset_files import read_dataset
from agentkit.evals.running import run_eval
from agentkit.evals.scores import Evaluator, evaluator_name

if TYPE_CHECKING:
    from agentkit.agents.agent import Agent
    from agentkit.core.policies.budget import Budget
    from agentkit.core.runtime.context import RunContext
    from agentkit.evals.report import EvalReport

__all__ = ["Dataset"]


class Dataset:
    """Cases and the evaluators that score every one of them."""

    __slots__ = ("cases", "evaluators", "name")

    def __init__(
        self,
        cases: Iterable[Case],
        *,
        evaluators: Iterable[Evaluator] = (),
        name: str = "eval",
    ) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"a dataset name is a non-empty string, got {name!r}")
        numbered: list[Case] = []
        for index, case in enumerate(cases, 1):
            if not isinstance(case, Case):
                raise TypeError(f"dataset {name!r}: case {index} is not a Case: {case!r}")
            if case.id is None:
                # A copy: the same Case may sit in another dataset at another position.
                case = Case(case.input, expected=case.expected, id=f"case-{index}",
                            metadata=case.metadata, turns=case.turns)
            numbered.append(case)
        ids = [c.id for c in numbered]
        repeated = sorted({i for i in ids if ids.count(i) > 1}, key=str)
        if repeated:
            raise ValueError(f"dataset {name!r}: case ids must be unique; repeated: {repeated}")
        self.cases: tuple[Case, ...] = tuple(numbered)
        self.evaluators: tuple[Evaluator, ...] = tuple(evaluators)
        for evaluator in self.evaluators:
            if not callable(evaluator):
                raise TypeError(
                    f"dataset {name!r}: evaluator {evaluator!r} is not callable; an evaluator "
                    "is a function (EvalContext) -> Score | bool | float, or a class with "
                    "__call__"
                )
        self.name = name

    @classmethod
    def from_file(
        cls, path: str | Path, *, evaluators: Iterable[Evaluator] = (), name: str | None = None
    ) -> Dataset:
        """Read cases from a ``.json``, ``.jsonl``, ``.yaml`` or ``.yml`` file.

        Raises :class:`~agentkit.evals.DatasetError` naming the line and field at fault.
        """
        file_name, fields = read_dataset(Path(path))
        cases = [Case(**kwargs) for kwargs in fields]
        return cls(cases, evaluators=evaluators, name=name or file_name)

    def select(self, case_ids: Iterable[str]) -> Dataset:
        """The same dataset with only the cases named, in the dataset's order."""
        wanted = set(case_ids)
        unknown = sorted(wanted - {c.id for c in self.cases if c.id is not None})
        if unknown:
            raise KeyError(
                f"dataset {self.name!r} has no case(s) {unknown}; cases: "
                f"{[c.id for c in self.cases]}"
            )
        chosen = [c for c in self.cases if c.id in wanted]
        return Dataset(chosen, evaluators=self.evaluators, name=self.name)

    def evaluator_names(self) -> tuple[str, ...]:
        """The name each evaluator's scores are filed under, in order; a name used twice
        gets ``#2``, ``#3`` so no score hides another."""
        names: list[str] = []
        for evaluator in self.evaluators:
            base = evaluator_name(evaluator)
            name, n = base, 1
            while name in names:
                n += 1
                name = f"{base}#{n}"
            names.append(name)
        return tuple(names)

    async def evaluate(
        self,
        agent: Agent,
        ctx_factory: Callable[[], RunContext],
        *,
        repeat: int = 1,
        max_concurrency: int = 8,
        timeout: float | None = None,
        budget: Budget | None = None,
        progress: bool = True,
    ) -> EvalReport:
        """Run every case ``repeat`` times (at most ``max_concurrency`` at once) and
        score each run with the evaluators.

        ``ctx_factory()`` is called once per case × repeat. ``timeout`` bounds each case
        (all its turns): a case past it fails with the reason. ``budget`` is shared by
        every run (its ceilings count over the whole eval, enforced by the contexts'
        ``meter()``): once spent, no new run starts, the run it stopped is not scored,
        and the report says so (``stopped``, ``unfinished``). Progress goes to stderr
        unless ``progress=False``.
        """
        return await run_eval(
            self.name, self.cases, self.evaluators, agent, ctx_factory,
            names=self.evaluator_names(), repeat=repeat, max_concurrency=max_concurrency,
            timeout=timeout, budget=budget, progress=progress,
        )

    def __len__(self) -> int:
        return len(self.cases)

    def __repr__(self) -> str:
        return f"Dataset({self.name!r}, {len(self.cases)} cases, {len(self.evaluators)} evaluators)"
