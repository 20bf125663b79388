"""The OpenAPI document of the HTTP API, served at ``/openapi.json``."""

from __future__ import annotations

from typing import Any

__all__ = ["openapi_document"]

_ERROR = {"description": "An error: {\"error\": {\"type\", \"message\"}}",
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}

_PATHS: dict[str, dict[str, tuple[str, tuple[int, ...]]]] = {
    "/healthz": {"get": ("The server is up", ())},
    "/openapi.json": {"get": ("This document: every route of the API", ())},
    "/v1/agents": {"get": ("The agents served, each with its model and tools", (401,))},
    "/v1/agents/{agent}/runs": {"post": (
        "Start a run: {input, session, settings, run_id, wait}; 202 {run_id, status}, "
        "or the finished run with wait=true; a run_id given again returns its run (200)",
        (400, 401, 404, 409, 413))},
    "/v1/agents/{agent}/ag-ui": {"post": (
        "AG-UI: a RunAgentInput in, the run's AG-UI events out as Server-Sent Events; a "
        "suspended run ends with one interrupt, answered by a resume entry whose payload is "
        "the decisions as Agent.resume takes them", (400, 401, 403, 404, 409, 413, 422))},
    "/v1/runs": {"get": ("Runs newest first; ?status=&agent=&session=&limit=&cursor=",
                         (400, 401))},
    "/v1/runs/{run_id}": {"get": (
        "A run: status, agent, session, times, usage, cost, output, stop reason, pending "
        "calls, and who decided what", (401, 404))},
    "/v1/runs/{run_id}/events": {"get": (
        "Server-Sent Events of the run, each with an id; honours Last-Event-ID; ends after "
        "the final event", (400, 401, 404))},
    "/v1/runs/{run_id}/trace": {"get": ("The run's spans as a tree", (401, 404))},
    "/v1/runs/{run_id}/decisions": {"post": (
        "Decide for a suspended run: {decisions: {call id: decision}} as Agent.resume "
        "takes them; 422 names the pending ids and accepted forms, 409 when another "
        "decision was accepted first", (400, 401, 403, 404, 409, 413, 422))},
    "/v1/runs/{run_id}/cancel": {"post": (
        "Cancel a run: a running one stops at its next safe point (cancelling), one "
        "waiting for a person ends at once (cancelled); 409 for a run that ended",
        (401, 403, 404, 409))},
    "/v1/approvals": {"get": (
        "Every call waiting for a person across runs; ?agent=&kind=&limit=&cursor=",
        (400, 401))},
    "/v1/sessions": {"get": ("The ids of the conversations", (401,))},
    "/v1/sessions/{session_id}": {"get": ("One conversation's messages", (401, 404))},
}


def openapi_document() -> dict[str, Any]:
    """The API as an OpenAPI 3.1 document."""
    paths: dict[str, Any] = {}
    for path, methods in _PATHS.items():
        paths[path] = {}
        for method, (summary, errors) in methods.items():
            parameters = [
                {"name": name.strip("{}"), "in": "path", "required": True,
                 "schema": {"type": "string"}}
                for name in path.split("/") if name.startswith("{")
            ]
            paths[path][method] = {
                "summary": summary, "parameters": parameters,
                "responses": {"200": {"description": "OK"},
                              **{str(status): _ERROR for status in errors}},
            }
    return {
        "openapi": "3.1.0",
        "info": {"title": "agentkit", "version": "1"},
        "paths": paths,
        "components": {
            "schemas": {"Error": {"type": "object", "required": ["error"], "properties": {
                "error": {"type": "object", "required": ["type", "message"], "properties": {
                    "type": {"type": "string"}, "message": {"type": "string"}}}}}},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
    }
