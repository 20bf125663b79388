"""Cases and datasets: what an agent is asked, and what a good answer looks like."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentkit.core.contracts.frozen import FrozenDict
from agentkit.evals.dataset_files import read_dataset
from agentkit.evals.running import evaluate
from agentkit.evals.scores import Evaluator, evaluator_name

if TYPE_CHECKING:
    from agentkit.agents.agent import Agent
    from agentkit.core.policies.budget import Budget
    from agentkit.core.runtime.context import RunContext
    from agentkit.evals.report import EvalReport

__all__ = ["Case", "Dataset"]


class Case:
    """One thing to ask the agent: ``input`` (what ``Agent.run`` takes), or ``turns``
    (user inputs played one after another into one session, each turn scored).

    ``expected`` is what the evaluators compare with; for a multi-turn case it is None
    or a list with one entry per turn.
    """

    __slots__ = ("expected", "id", "input", "metadata", "turns")

    def __init__(
        self,
        input: Any = None,
        *,
        expected: Any = None,
        id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        turns: Sequence[Any] | None = None,
    ) -> None:
        if (input is None) == (turns is None):
            raise ValueError(
                f"case {id!r}: give exactly one of input= (one run) or turns=[...] (a "
                "conversation), got " + ("both" if input is not None else "neither")
            )
        if turns is not None:
            if isinstance(turns, str) or not isinstance(turns, Sequence) or not turns:
                raise ValueError(
                    f"case {id!r}: turns= takes a non-empty list of inputs, got {turns!r}"
                )
            if expected is not None and (
                not isinstance(expected, list | tuple) or len(expected) != len(turns)
            ):
                raise ValueError(
                    f"case {id!r}: a multi-turn case's expected= is None or a list with one "
                    f"entry per turn ({len(turns)}), got {expected!r}"
                )
        if id is not None and (not isinstance(id, str) or not id):
            raise ValueError(f"a case id is a non-empty string, got {id!r}")
        self.input = input
        self.expected = expected
        self.id = id
        self.metadata: Mapping[str, Any] = FrozenDict(metadata or {})
        self.turns: tuple[Any, ...] | None = None if turns is None else tuple(turns)

    @property
    def inputs(self) -> tuple[Any, ...]:
        """The inputs in play order: ``(input,)`` or the turns."""
        return self.turns if self.turns is not None else (self.input,)

    def expected_for(self, turn: int) -> Any:
        """What turn ``turn`` (from 0) is expected to give."""
        if self.turns is None or self.expected is None:
            return self.expected
        return self.expected[turn]

    def __repr__(self) -> str:
        what = f"turns={list(self.turns)!r}" if self.turns is not None else repr(self.input)
        return f"Case({what}, id={self.id!r})"


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
        """Run every case ``repeat`` times and score each run; see :func:`evaluate`."""
        return await evaluate(
            self, agent, ctx_factory, repeat=repeat, max_concurrency=max_concurrency,
            timeout=timeout, budget=budget, progress=progress,
        )

    def __len__(self) -> int:
        return len(self.cases)

    def __repr__(self) -> str:
        return f"Dataset({self.name!r}, {len(self.cases)} cases, {len(self.evaluators)} evaluators)"
