"""Reports on disk: JSON (read back for ``compare``) and JUnit XML (for CI)."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.types import ToolCall, Usage
from agentkit.evals.results import CaseResult
from agentkit.evals.scores import Score

__all__ = ["read_json", "write_json", "write_junit"]

_FORMAT = 1
"""The version of the JSON layout; a file of another version is refused."""


def _plain(value: Any) -> Any:
    """``value`` as JSON data: JSON values as they are, anything else as its repr."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        return repr(value)


def _result(result: CaseResult) -> dict[str, Any]:
    return {
        "case_id": result.case_id,
        "repeat": result.repeat,
        "output": _plain(result.output),
        "trajectory": [
            {"id": c.id, "name": c.name, "arguments": _plain(dict(c.arguments))}
            for c in result.trajectory
        ],
        "scores": {
            name: {"value": s.value, "passed": s.passed, "reason": s.reason,
                   "error": s.error, "cost_usd": s.cost_usd}
            for name, s in result.scores.items()
        },
        "usage": {**dataclasses.asdict(result.usage),
                  "unpriced_models": list(result.usage.unpriced_models)},
        "cost_usd": result.cost_usd,
        "latency_s": result.latency_s,
        "run_id": result.run_id,
        "passed": result.passed,
        "stop_reason": result.stop_reason,
        "error": result.error,
        "judge_cost_usd": result.judge_cost_usd,
    }


def write_json(header: Mapping[str, Any], results: Sequence[CaseResult], path: Path) -> None:
    """Write a report's ``header`` fields (name, eval id, ...) and ``results`` as JSON."""
    data = {"agentkit_eval": _FORMAT, **{k: _plain(v) for k, v in header.items()},
            "results": [_result(r) for r in results]}
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def read_json(path: Path) -> dict[str, Any]:
    """The ``EvalReport(...)`` keywords of a file :func:`write_json` wrote.

    Raises ValueError naming the file when it is not such a report.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: cannot read an eval report: {exc}") from None
    if not isinstance(data, Mapping) or data.get("agentkit_eval") != _FORMAT:
        raise ValueError(
            f"{path}: not an agentkit eval report (format {_FORMAT}); write one with "
            "report.to_json(path) or agentkit eval --json"
        )
    try:
        return {
            "name": data["name"],
            "eval_id": data["eval_id"],
            "results": tuple(_read_result(r) for r in data["results"]),
            "evaluators": tuple(data["evaluators"]),
            "repeat": data["repeat"],
            "stopped": data["stopped"],
            "unfinished": tuple(data["unfinished"]),
            "metadata": FrozenDict(data["metadata"]),
        }
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: a malformed eval report: {type(exc).__name__}: {exc}") from None


def _read_result(data: Mapping[str, Any]) -> CaseResult:
    usage = dict(data["usage"])
    usage["unpriced_models"] = tuple(usage.get("unpriced_models", ()))
    return CaseResult(
        case_id=data["case_id"],
        repeat=data["repeat"],
        output=data["output"],
        trajectory=tuple(ToolCall(c["id"], c["name"], c["arguments"]) for c in data["trajectory"]),
        scores=FrozenDict({
            name: Score(s["value"], s["passed"], s["reason"], s["error"], cost_usd=s["cost_usd"])
            for name, s in data["scores"].items()
        }),
        usage=Usage(**usage),
        cost_usd=data["cost_usd"],
        latency_s=data["latency_s"],
        run_id=data["run_id"],
        passed=data["passed"],
        stop_reason=data["stop_reason"],
        error=data["error"],
        judge_cost_usd=data["judge_cost_usd"],
    )


def write_junit(name: str, results: Sequence[CaseResult], unfinished: Sequence[str],
                stopped: str | None, path: Path) -> None:
    """Write JUnit XML: a test case per case and repeat, a failure per failing result
    with every reason, an error for a run or evaluator that broke, a skipped test case
    per run the eval stopped before (``unfinished``, for the reason ``stopped``)."""
    failures = sum(1 for r in results if not r.passed and not _broken(r))
    errors = sum(1 for r in results if _broken(r))
    total_time = sum(r.latency_s for r in results)
    counts = {
        "tests": str(len(results) + len(unfinished)),
        "failures": str(failures),
        "errors": str(errors),
        "skipped": str(len(unfinished)),
        "time": f"{total_time:.3f}",
    }
    suites = ET.Element("testsuites", {"name": name, **counts})
    suite = ET.SubElement(suites, "testsuite", {"name": name, **counts})
    for result in results:
        case = ET.SubElement(suite, "testcase", {
            "classname": name,
            "name": f"{result.case_id}#{result.repeat + 1}",
            "time": f"{result.latency_s:.3f}",
        })
        if not result.passed:
            reasons = result.reasons() or [f"the run stopped with {result.stop_reason!r}"]
            tag = "error" if _broken(result) else "failure"
            node = ET.SubElement(case, tag, {"message": reasons[0], "type": f"eval.{tag}"})
            node.text = "\n".join(reasons)
        ET.SubElement(case, "system-out").text = f"run_id={result.run_id}"
    for left in unfinished:
        case = ET.SubElement(suite, "testcase", {"classname": name, "name": left, "time": "0.000"})
        ET.SubElement(case, "skipped", {"message": stopped or "not run"})
    ET.indent(suites)
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)


def _broken(result: CaseResult) -> bool:
    # A timeout is the agent failing the case; a crash or an evaluator that raised is a
    # broken test, which CI tools show apart from failures.
    return result.stop_reason == "crashed" or any(
        s.error is not None for s in result.scores.values()
    )
