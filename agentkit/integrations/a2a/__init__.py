"""A2A (the Agent2Agent protocol): remote A2A agents as agentkit tools.

``A2AAgent(url, token=...)`` reads a remote agent's card; ``.as_tool()`` makes it a
tool whose remote ``input-required`` suspends the calling run (see ``docs/a2a.md``).
The wire format both directions share is :mod:`agentkit.integrations.a2a.protocol`.
"""
