"""`agentkit demo`: offline it is scripted, suspends before the refund, resumes once
approved and answers; a model that cannot be used is one line on stderr and status 2."""

from __future__ import annotations

import os
import re
import subprocess
import sys


def _demo(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "AGENTKIT_MODEL"}
    return subprocess.run(
        [sys.executable, "-m", "agentkit", "demo", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


def test_offline_demo_is_scripted_suspends_is_approved_and_answers() -> None:
    result = _demo()
    assert (result.returncode, result.stderr) == (0, "")
    # The run id is random and the token counts are FakeLLM's estimate.
    stdout = re.sub(r"run [0-9a-f]{32} ", "run <id> ", result.stdout)
    stdout = re.sub(r"\d+ input \+ \d+ output", "<n> input + <n> output", stdout)
    assert stdout == EXPECTED


EXPECTED = """\
agentkit demo: SCRIPTED and offline. No model is called: FakeLLM plays the
model from the script in agentkit/demo.py. Real model: agentkit demo --model SPEC

task    Order A-1042 arrived broken. Please refund it in full.
tools   lookup_order (read-only), issue_refund (side-effecting, requires approval)
chain   tracing > audit > egress > meter > retry > idempotent  (make_ctx's default tool chain)

model   Let me look that order up first.
call    lookup_order(order_id='A-1042')  [call_1]
result  {"order_id": "A-1042", "item": "espresso machine", "paid_usd": 129.0, "status": "delivered"}
model   It was delivered and the customer paid $129.00, so I will refund all of it.
call    issue_refund(order_id='A-1042', amount_usd=129.0, reason='arrived broken')  [call_2]
PAUSED  run <id> is awaiting_approval; nothing of this turn ran
held    call_2 issue_refund {'order_id': 'A-1042', 'amount_usd': 129.0, 'reason': 'arrived broken'}
        arguments are frozen (FrozenDict): what is approved is exactly what runs
approve by the demo (a human, in real use): agent.resume(run_id, {'call_2': 'approve'}, ctx)
result  refund RF-A-1042 of $129.00 issued to the original payment method
model   Refunded $129.00 for order A-1042 (refund RF-A-1042). Sorry it arrived broken!

final   complete after 3 model calls; <n> input + <n> output tokens; $0.0000 of a $0.50 budget
cache   0 prompt tokens read from the provider's cache, 0 written to it
audit   lookup_order  executed  [call_1]
audit   issue_refund  executed  [call_2]
"""


def test_a_model_that_cannot_be_used_is_one_line_and_status_2() -> None:
    result = _demo("--model", "no-such-provider:some-model")
    assert result.returncode == 2
    assert result.stderr.startswith("agentkit demo: model 'no-such-provider:some-model' failed: ")
    assert len(result.stderr.splitlines()) == 1
    assert "Traceback" not in result.stderr
